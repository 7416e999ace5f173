// Gateway throughput: GET of one object and POST of new objects, measured with autocannon
// (a separate process) against a gateway in this process on a fresh database.
//   node --conditions=source --import tsx test/bench/gateway.bench.ts [--duration 10] [--connections 50]
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";
import { freshDatabase } from "@flotilla/testkit";
import { ObjectStore } from "@flotilla/store";
import { buildGateway } from "../../services/gateway/src/app.js";
import { TOKENS, bearer, testGatewayDeps } from "../../services/gateway/src/access.test-support.js";

const { values } = parseArgs({ options: { duration: { type: "string", default: "10" }, connections: { type: "string", default: "50" } } });

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  non2xx: number;
  errors: number;
}

function autocannon(args: string[]): Promise<AutocannonResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [require_resolve("autocannon/autocannon.js"), "--json", ...args], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`autocannon exited ${code}`))));
  });
}
function require_resolve(spec: string): string {
  return new URL(import.meta.resolve(spec)).pathname;
}

const db = await freshDatabase({ max: 16 });
const store = new ObjectStore(db.sql);
// every request authenticated as the administrator (system:masters)
const gw = buildGateway(testGatewayDeps(store));
const { url } = await gw.start({ host: "127.0.0.1", port: 0 });
const coll = `${url}/apis/apps/v1/namespaces/default/deployments`;
const deployment = (name: string | undefined) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: name ? { name, labels: { app: "nginx" } } : { generateName: "bench-", labels: { app: "nginx" } },
  spec: { replicas: 3, selector: { matchLabels: { app: "nginx" } }, template: { metadata: { labels: { app: "nginx" } }, spec: { containers: [{ name: "nginx", image: "nginx", resources: { requests: { cpu: "100m", memory: "128Mi" } } }] } } },
});
const seeded = await fetch(coll, { method: "POST", headers: { "content-type": "application/json", ...bearer() }, body: JSON.stringify(deployment("nginx")) });
if (seeded.status !== 201) throw new Error(`seeding the Deployment: ${seeded.status} ${await seeded.text()}`);

const policy = {
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { generateName: "pp-" },
  spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }], placement: { clusterAffinity: { clusterNames: ["member1", "member2"] }, replicaScheduling: { replicaSchedulingType: "Divided", weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ["member1"] }, weight: 1 }, { targetCluster: { clusterNames: ["member2"] }, weight: 2 }] } } } },
};

const common = ["-c", values.connections!, "-d", values.duration!, "-H", `authorization=Bearer ${TOKENS.admin}`];
const rows: Array<[string, AutocannonResult]> = [];
rows.push(["GET deployment", await autocannon([...common, `${coll}/nginx`])]);
rows.push(["POST deployment", await autocannon([...common, "-m", "POST", "-H", "content-type=application/json", "-b", JSON.stringify(deployment(undefined)), coll])]);
rows.push(["POST propagationpolicy (decode+default+validate)", await autocannon([...common, "-m", "POST", "-H", "content-type=application/json", "-b", JSON.stringify(policy), `${url}/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies`])]);

const mem = process.memoryUsage();
console.log(`\ngateway benchmark ${new Date().toISOString().slice(0, 10)}: ${values.connections} connections, ${values.duration} s each, fresh database, gateway in-process, autocannon in a child process`);
console.log("| operation | req/s | p50 ms | p99 ms | non-2xx | errors |");
console.log("|---|---|---|---|---|---|");
for (const [name, r] of rows) console.log(`| ${name} | ${Math.round(r.requests.average)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx} | ${r.errors} |`);
console.log(`gateway process RSS ${(mem.rss / 2 ** 20).toFixed(0)} MiB, heap used ${(mem.heapUsed / 2 ** 20).toFixed(0)} MiB`);
await gw.stop();
await db.drop();
