// `npm start`: install and build when needed, check Postgres and NATS, then run the whole local
// stack as processes: the member-cluster simulator (member1..3), every service, and join the
// members through the gateway. Ctrl-C stops everything.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { DATABASE_URL, NATS_URL, build, ensureBackends, ensureInstalled, root } from "./lib.mjs";

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

const children = [];
let stopping = false;

function launch(name, script, extraEnv, args = []) {
  const child = spawn(process.execPath, [script, ...args], { cwd: root, env: { ...env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
  const prefix = `${name.padEnd(14)}| `;
  const pipe = (stream, out) => {
    let buf = "";
    stream.on("data", (d) => {
      buf += d;
      const lines = buf.split("\n");
      buf = lines.pop();
      for (const l of lines) out.write(prefix + l + "\n");
    });
  };
  pipe(child.stdout, process.stdout);
  pipe(child.stderr, process.stderr);
  child.on("exit", (code, signal) => {
    if (!stopping) {
      console.error(`${prefix}exited (${signal ?? code}); stopping the stack`);
      void stop(1);
    }
  });
  children.push(child);
  return child;
}

async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  console.log("\nstopping…");
  for (const c of children) c.kill("SIGTERM");
  await Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once("exit", r)))));
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

Ctrl-C stops everything.`);
