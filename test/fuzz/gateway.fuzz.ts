// The long fuzz run of the gateway (CI runs a short one: gateway.fuzz.int.test.ts):
//   node --conditions=source --import tsx test/fuzz/gateway.fuzz.ts --requests 10000 [--seed N]
// Starts the gateway as a process of its own (with a token file of its own; most requests carry
// its administrator token, a share none or a bad one), sends the generated hostile requests one at a time
// and prints the answers by status, then every failure (5xx, INTERNAL, a 4xx that is not a
// Status, a rejected write that wrote, a leaked Secret value, a crash). Exits 1 on any failure.
import { parseArgs } from "node:util";
import { runFuzz, startFuzzTarget } from "./run.js";

const { values } = parseArgs({ options: { requests: { type: "string", default: "10000" }, seed: { type: "string" } } });
const requests = Number(values.requests);
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
console.log(`fuzzing the gateway: ${requests} requests, seed ${seed}`);

const target = await startFuzzTarget();
let result;
try {
  result = await runFuzz(target, { requests, seed, onProgress: (n) => n % 1000 === 0 && console.log(`  ${n} sent`) });
} finally {
  await target.stop();
}
const statuses = Object.entries(result.statuses).sort(([a], [b]) => (a < b ? -1 : 1));
console.log(`\n${result.requests} answered in ${result.seconds.toFixed(1)} s (${result.unsent} not sendable as generated); ${result.rejectedWrites} rejected writes checked against the outbox; ${result.unauthenticated} sent without valid credentials`);
console.log(statuses.map(([s, n]) => `  ${s.padEnd(28)} ${n}`).join("\n"));
const fivexx = statuses.filter(([s]) => /^5\d\d$/.test(s)).reduce((a, [, n]) => a + n, 0);
console.log(`5xx: ${fivexx}; failures: ${result.failures.length}`);
for (const f of result.failures.slice(0, 50)) console.log(`\n#${f.index} ${f.problem}\n  ${f.case}`);
process.exit(result.failures.length ? 1 : 0);
