// `npm start`: install and build when needed, check Postgres and NATS, then run the whole local
// stack as processes: the member-cluster simulator (member1..3), every service, and join the
// members through the gateway. A process that exits is started again (with a growing delay);
// the rest of the stack keeps running. Ctrl-C stops everything.
import { existsSync } from "node:fs";
import path from "node:path";
import { DATABASE_URL, NATS_URL, build, ensureBackends, ensureInstalled, root } from "./lib.mjs";
import { supervise } from "./supervise.mjs";

ensureInstalled();
build();
await ensureBackends();

const env = { ...process.env, DATABASE_URL, NATS_URL };
const HOST = env.HOST ?? "127.0.0.1";
const PORT = env.PORT ?? "8080";
const gatewayUrl = `http://${HOST}:${PORT}`;

/** Every service that exists in this checkout, in start order. */
const SERVICES = [
  { name: "gateway", env: { PORT, GRPC_PORT: env.GRPC_PORT ?? "9090" } },
  { name: "execution", env: { PORT: "8085", ESTIMATOR_PORT: env.ESTIMATOR_PORT ?? "9095" } },
  { name: "binding", env: { PORT: "8081" } },
  { name: "scheduler", env: { PORT: "8082", SCHEDULER_GRPC_PORT: env.SCHEDULER_GRPC_PORT ?? "9092" } },
  { name: "taint-manager", env: { PORT: "8083" } },
  { name: "eviction", env: { PORT: "8084" } },
];

/** Every supervised process (see supervise.mjs: one that exits is started again). */
const supervised = [];
let stopping = false;

function launch(name, script, extraEnv, args = []) {
  supervised.push(
    supervise({
      name,
      args: [script, ...args],
      cwd: root,
      env: { ...env, ...extraEnv },
      // a configuration error: restarting cannot help, and the stack is not what was asked for
      onFatal: () => void stop(1),
    }),
  );
}

async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  console.log("\nstopping…");
  await Promise.all(supervised.map((s) => s.stop()));
  process.exit(code);
}
process.on("SIGINT", () => void stop(0));
process.on("SIGTERM", () => void stop(0));

const simCli = path.join(root, "packages/member-sim/dist/cli.js");
const simConfig = env.MEMBER_SIM_CONFIG ?? path.join(root, "packages/member-sim/clusters.example.yaml");
const withSim = existsSync(simCli) && env.MEMBER_SIM !== "false";
if (withSim) launch("member-sim", simCli, {}, ["--config", simConfig]);

for (const s of SERVICES) {
  const main = path.join(root, "services", s.name, "dist", "main.js");
  if (existsSync(main)) launch(s.name, main, s.env);
}

// wait for the gateway, then join the simulated members
for (let i = 0; i < 100; i++) {
  try {
    if ((await fetch(`${gatewayUrl}/readyz`)).ok) break;
  } catch {}
  await new Promise((r) => setTimeout(r, 200));
}
if (withSim && existsSync(path.join(root, "scripts/join-members.mjs"))) {
  const { joinMembers } = await import("./join-members.mjs");
  await joinMembers({ gatewayUrl, adminUrl: env.MEMBER_SIM_ADMIN_URL ?? "http://127.0.0.1:7070" }).catch((e) => console.error(`joining members failed: ${e.message}`));
}

console.log(`
Flotilla is running.
  gateway   ${gatewayUrl}   (docs ${gatewayUrl}/docs, OpenAPI ${gatewayUrl}/openapi.json)
  gRPC      ${HOST}:${env.GRPC_PORT ?? "9090"}

Try:
  curl -s -X POST -H 'Content-Type: application/yaml' --data-binary @examples/nginx-propagation.yaml \\
    ${gatewayUrl}/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies
  kubectl --server=${gatewayUrl} get propagationpolicies -A

A service that exits is restarted after 1 s, doubling to 30 s while it keeps failing.
Ctrl-C stops everything.`);
