// `npm test`: install and build when needed, then run every test (unit, integration, end to end)
// with node's test runner. Integration tests make their own databases and streams, so they never
// touch a running stack. The end-to-end files (test/e2e), which start every service as a process,
// and the resilience files (test/resilience), which stop and start Postgres and NATS servers of
// their own, run one at a time after the rest. `--unit` runs only the tests that need no Postgres
// or NATS.
import { spawn } from "node:child_process";
import path from "node:path";
import { build, ensureBackends, ensureInstalled, findFiles, root } from "./lib.mjs";

const unitOnly = process.argv.includes("--unit");
const extra = process.argv.slice(2).filter((a) => a !== "--unit");

ensureInstalled();
build();
if (!unitOnly) await ensureBackends();

const e2eDir = `${path.sep}test${path.sep}e2e${path.sep}`;
const resilienceDir = `${path.sep}test${path.sep}resilience${path.sep}`;
const alone = (f) => f.includes(e2eDir) || f.includes(resilienceDir);
let files = ["packages", "services", "test"].flatMap((d) => findFiles(path.join(root, d), ".test.ts"));
if (unitOnly) files = files.filter((f) => !f.endsWith(".int.test.ts") && !alone(f));
if (extra.length) files = files.filter((f) => extra.some((x) => f.includes(x)));
const batches = [
  { name: "unit and integration", files: files.filter((f) => !alone(f)), concurrency: 2 },
  { name: "end to end and resilience", files: files.filter(alone), concurrency: 1 },
].filter((b) => b.files.length);

/** Runs one batch, passing its output through and counting its TAP summary. */
function runBatch(b) {
  console.log(`> ${b.name}: ${b.files.length} test files`);
  const args = ["--conditions=source", "--import", "tsx", "--test", "--test-force-exit", "--test-timeout=240000", `--test-concurrency=${b.concurrency}`, ...b.files.map((f) => path.relative(root, f))];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
    let tail = "";
    child.stdout.on("data", (d) => {
      process.stdout.write(d);
      tail = (tail + d).slice(-4000);
    });
    // "close", not "exit": only then has all of the child's output (and its summary) been read
    child.on("close", (code) => {
      const count = (k) => Number(new RegExp(`^# ${k} (\\d+)$`, "m").exec(tail)?.[1] ?? 0);
      const summarized = /^# tests \d+$/m.test(tail);
      if (!summarized) console.error(`> ${b.name}: the test runner printed no summary`);
      resolve({ code: summarized ? (code ?? 1) : 1, pass: count("pass"), fail: count("fail") + count("cancelled"), skipped: count("skipped") });
    });
  });
}

let pass = 0;
let fail = 0;
let skipped = 0;
let failedBatch = false;
for (const b of batches) {
  const r = await runBatch(b);
  pass += r.pass;
  fail += r.fail;
  skipped += r.skipped;
  if (r.code !== 0) failedBatch = true;
}
console.log(`\ntests: ${pass} passed, ${fail} failed, ${skipped} skipped`);
process.exit(failedBatch || fail > 0 ? 1 : 0);
