// `npm test`: install and build when needed, then run every test (unit, integration, end to end)
// with node's test runner. Integration tests make their own databases and streams, so they never
// touch a running stack. The end-to-end files (test/e2e), which start every service as a process,
// and the resilience files (test/resilience), which stop and start Postgres and NATS servers of
// their own, run one at a time after the rest. `--unit` runs only the tests that need no Postgres
// or NATS. A file whose report did not arrive whole (no test reported, or no summary of its own)
// is run again on its own once, and fails the run if it is incomplete again.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { build, ensureBackends, ensureInstalled, onPinnedNode, findFiles, root } from "./lib.mjs";

const unitOnly = process.argv.includes("--unit");
const extra = process.argv.slice(2).filter((a) => a !== "--unit");

ensureInstalled();
await onPinnedNode();
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
  const reported = path.join(mkdtempSync(path.join(os.tmpdir(), "flotilla-test-")), "files");
  const reporters = ["--test-reporter=spec", "--test-reporter-destination=stdout", `--test-reporter=${path.join(root, "scripts", "files-reporter.mjs")}`, `--test-reporter-destination=${reported}`];
  // test-exit-drain.mjs: --test-force-exit would otherwise cut off the end of a file's report
  const args = ["--conditions=source", "--import", "tsx", "--import", path.join(root, "scripts", "test-exit-drain.mjs"), "--test", "--test-force-exit", "--test-timeout=240000", ...reporters, `--test-concurrency=${b.concurrency}`, ...b.files.map((f) => path.relative(root, f))];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
    // the spec reporter's summary ("ℹ tests 12", "ℹ pass 11", …) comes before the failures' details
    const summary = new Map();
    let partial = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d) => {
      process.stdout.write(d);
      const lines = (partial + d).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        const m = /^ℹ (tests|pass|fail|cancelled|skipped) (\d+)$/.exec(line);
        if (m) summary.set(m[1], Number(m[2]));
      }
    });
    // "close", not "exit": only then has all of the child's output (and its summary) been read
    child.on("close", (code) => {
      const count = (k) => summary.get(k) ?? 0;
      const summarized = summary.has("tests");
      if (!summarized) console.error(`> ${b.name}: the test runner printed no summary`);
      const { silent, partialPasses } = incompleteFiles(b.files, reported);
      for (const f of silent) console.error(`> ${b.name}: ${path.relative(root, f)} did not report whole (not run, or its report was cut off)`);
      rmSync(path.dirname(reported), { recursive: true, force: true });
      resolve({ code: summarized ? (code ?? 1) : 1, pass: count("pass"), fail: count("fail") + count("cancelled"), skipped: count("skipped"), silent, partialPasses });
    });
  });
}

/**
 * The files of a batch whose report did not arrive whole (the runner's own summary does not
 * say), and the passes their partial reports added to the batch's count.
 */
function incompleteFiles(files, reportedPath) {
  const whole = new Set();
  const partialPasses = new Map();
  let lines = [];
  try {
    lines = readFileSync(reportedPath, "utf8").split("\n").filter(Boolean);
  } catch {
    // no report at all: every file is incomplete
  }
  for (const line of lines) {
    const r = JSON.parse(line);
    const f = path.resolve(root, r.file);
    if (r.whole) whole.add(f);
    else partialPasses.set(f, r.pass);
  }
  const silent = files.filter((f) => !whole.has(path.resolve(f)));
  return { silent, partialPasses: silent.reduce((n, f) => n + (partialPasses.get(path.resolve(f)) ?? 0), 0) };
}

let pass = 0;
let fail = 0;
let skipped = 0;
let failedBatch = false;
for (const b of batches) {
  let r = await runBatch(b);
  // a file whose report did not arrive whole is run again on its own, once; incomplete again, it fails
  if (r.silent.length > 0) {
    const again = await runBatch({ name: `${b.name}, files whose report did not arrive whole`, files: r.silent, concurrency: 1 });
    fail += again.silent.length;
    // the partial reports' passes are counted again, whole, by the second run
    r = { ...again, pass: r.pass - r.partialPasses + again.pass, fail: r.fail + again.fail, skipped: r.skipped + again.skipped, code: r.code || again.code };
  }
  pass += r.pass;
  fail += r.fail;
  skipped += r.skipped;
  if (r.code !== 0) failedBatch = true;
}
console.log(`\ntests: ${pass} passed, ${fail} failed, ${skipped} skipped`);
process.exit(failedBatch || fail > 0 ? 1 : 0);
