// `npm test`: install and build when needed, then run every test (unit, integration, end to end)
// with node's test runner. Integration tests make their own databases and streams, so they never
// touch a running stack. `--unit` runs only the tests that need no Postgres or NATS.
import path from "node:path";
import { build, ensureBackends, ensureInstalled, findFiles, root, run } from "./lib.mjs";

const unitOnly = process.argv.includes("--unit");
const extra = process.argv.slice(2).filter((a) => a !== "--unit");

ensureInstalled();
build();
if (!unitOnly) await ensureBackends();

const dirs = ["packages", "services", "test"].map((d) => path.join(root, d));
let files = dirs.flatMap((d) => findFiles(d, ".test.ts"));
if (unitOnly) files = files.filter((f) => !f.endsWith(".int.test.ts") && !f.includes(`${path.sep}e2e${path.sep}`));
if (extra.length) files = files.filter((f) => extra.some((x) => f.includes(x)));
console.log(`> running ${files.length} test files`);
run(process.execPath, [
  "--conditions=source",
  "--import",
  "tsx",
  "--test",
  "--test-force-exit",
  "--test-timeout=180000",
  "--test-concurrency=2",
  ...files.map((f) => path.relative(root, f)),
]);
