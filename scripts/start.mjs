// `npm start`: install and build when needed, check Postgres and NATS, then run the whole local
// stack as processes: the member-cluster simulator (member1..3), every service, and join the
// members through the gateway. A process that exits is started again (with a growing delay);
// the rest of the stack keeps running. Ctrl-C stops everything.
//
// As in seed 001, member3 runs in Pull mode (PULL_MEMBERS, default "member3"; empty: every member
// Push): it is not joined; a flotilla-agent beside it registers it, with a ServiceAccount token
// written under .flotilla/ (scripts/register-agent.mjs, renewed every hour).
//
// The gateway serves HTTPS with a self-signed certificate and takes bearer tokens from a token
// file; both are created under .flotilla/ on the first start (an admin token, group
// system:masters), and a kubeconfig using them is written next to them.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import https from "node:https";
import path from "node:path";
import { DATABASE_URL, NATS_URL, build, ensureBackends, ensureInstalled, onPinnedNode, root } from "./lib.mjs";
import { supervise } from "./supervise.mjs";

ensureInstalled();
await onPinnedNode();
build();
await ensureBackends();

const stateDir0 = path.join(root, ".flotilla");
// member credentials are encrypted at rest with this key file (created by the first service that starts)
const env = {
  ...process.env,
  DATABASE_URL,
  NATS_URL,
  ENCRYPTION_KEYS_FILE: process.env.ENCRYPTION_KEYS_FILE ?? path.join(stateDir0, "encryption-keys"),
  ENCRYPTION_KEYS_FILE_CREATE: process.env.ENCRYPTION_KEYS_FILE_CREATE ?? "true",
};
const HOST = env.HOST ?? "127.0.0.1";
const PORT = env.PORT ?? "8080";
const gatewayUrl = `https://${HOST === "0.0.0.0" ? "127.0.0.1" : HOST}:${PORT}`;
const stateDir = stateDir0;
const tokenFile = env.TOKEN_AUTH_FILE ?? path.join(stateDir, "tokens.csv");
const certFile = env.TLS_CERT_FILE ?? path.join(stateDir, "tls.crt");
const keyFile = env.TLS_KEY_FILE ?? path.join(stateDir, "tls.key");
const kubeconfig = path.join(stateDir, "kubeconfig");
const saKeyFile = env.SERVICE_ACCOUNT_KEY_FILE ?? path.join(stateDir, "sa.key");
// the scheduler's and the estimator's gRPC servers speak TLS and take service account tokens: the
// gateway's certificate and signing key, made here before any service starts to read them
{
  const { ensureServingCert, ensureSigningKey } = await import("../packages/auth/dist/index.js");
  await ensureServingCert(certFile, keyFile, HOST === "0.0.0.0" ? [] : [HOST]);
  await ensureSigningKey(saKeyFile);
}
const internalGrpc = { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile, SERVICE_ACCOUNT_KEY_FILE: saKeyFile };

/** Every service that exists in this checkout, in start order. */
const SERVICES = [
  {
    name: "gateway",
    env: { PORT, GRPC_PORT: env.GRPC_PORT ?? "9090", TOKEN_AUTH_FILE: tokenFile, TOKEN_AUTH_FILE_CREATE: "true", TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile, TLS_CERT_CREATE: "true", AUDIT_LOG_PATH: env.AUDIT_LOG_PATH ?? path.join(stateDir, "audit.log"), SERVICE_ACCOUNT_KEY_FILE: saKeyFile, SCHEDULER_CA_FILE: certFile, MEMBER_ALLOW_HTTP: env.MEMBER_ALLOW_HTTP ?? "loopback" },
  },
  // the simulator's members answer plain http on 127.0.0.1
  { name: "execution", env: { PORT: "8085", ESTIMATOR_PORT: env.ESTIMATOR_PORT ?? "9095", MEMBER_ALLOW_HTTP: env.MEMBER_ALLOW_HTTP ?? "loopback", ...internalGrpc } },
  { name: "binding", env: { PORT: "8081" } },
  { name: "scheduler", env: { PORT: "8082", SCHEDULER_GRPC_PORT: env.SCHEDULER_GRPC_PORT ?? "9092", ESTIMATOR_CA_FILE: certFile, ...internalGrpc } },
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

const pullMembers = (env.PULL_MEMBERS ?? "member3").split(",").map((m) => m.trim()).filter(Boolean);
const simCli = path.join(root, "packages/member-sim/dist/cli.js");
const simConfig = env.MEMBER_SIM_CONFIG ?? path.join(root, "packages/member-sim/clusters.example.yaml");
const withSim = existsSync(simCli) && env.MEMBER_SIM !== "false";
if (withSim) launch("member-sim", simCli, {}, ["--config", simConfig]);

for (const s of SERVICES) {
  const main = path.join(root, "services", s.name, "dist", "main.js");
  if (existsSync(main)) launch(s.name, main, s.env);
}

/** GET over HTTPS trusting the gateway's certificate: the status code, or 0 when nothing answers. */
const probe = (url) =>
  new Promise((resolve) => {
    if (!existsSync(certFile)) return resolve(0);
    https.get(url, { ca: readFileSync(certFile) }, (res) => (res.resume(), resolve(res.statusCode))).on("error", () => resolve(0));
  });

// wait for the gateway (it creates the certificate and the token file), then write the
// kubeconfig and join the simulated members
let ready = false;
for (let i = 0; i < 150 && !ready; i++) {
  ready = (await probe(`${gatewayUrl}/readyz`)) === 200;
  if (!ready) await new Promise((r) => setTimeout(r, 200));
}
if (!ready) console.error(`the gateway did not become ready at ${gatewayUrl}/readyz`);
const adminToken = existsSync(tokenFile) ? (readFileSync(tokenFile, "utf8").split("\n").find((l) => l.includes("system:masters")) ?? "").split(",")[0] : "";
if (existsSync(certFile) && adminToken) {
  writeFileSync(
    kubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: flotilla",
      "  cluster:",
      `    server: ${gatewayUrl}`,
      `    certificate-authority-data: ${readFileSync(certFile).toString("base64")}`,
      "users:",
      "- name: flotilla-admin",
      "  user:",
      `    token: ${adminToken}`,
      "contexts:",
      "- name: flotilla",
      "  context: {cluster: flotilla, user: flotilla-admin}",
      "current-context: flotilla",
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
}
if (withSim && existsSync(path.join(root, "scripts/join-members.mjs"))) {
  // a child process, so that NODE_EXTRA_CA_CERTS makes its fetch trust the gateway's certificate
  const join = spawn(process.execPath, [path.join(root, "scripts/join-members.mjs"), gatewayUrl, env.MEMBER_SIM_ADMIN_URL ?? "http://127.0.0.1:7070"], {
    cwd: root,
    env: { ...env, NODE_EXTRA_CA_CERTS: certFile, FLOTILLA_TOKEN: adminToken, PULL_MEMBERS: pullMembers.join(",") },
    stdio: "inherit",
  });
  const code = await new Promise((r) => join.on("exit", r));
  if (code !== 0) console.error(`joining members failed (exit ${code})`);
}

// Pull-mode members: the agent's identity and token, then the agent itself
const agentMain = path.join(root, "services/agent/dist/main.js");
if (withSim && existsSync(agentMain)) {
  const simAdmin = env.MEMBER_SIM_ADMIN_URL ?? "http://127.0.0.1:7070";
  const registerAgent = (member, tokenFile) =>
    new Promise((resolve) => {
      const p = spawn(process.execPath, [path.join(root, "scripts/register-agent.mjs"), gatewayUrl, member, tokenFile], { cwd: root, env: { ...env, NODE_EXTRA_CA_CERTS: certFile, FLOTILLA_TOKEN: adminToken }, stdio: "inherit" });
      p.on("exit", (c) => resolve(c === 0));
    });
  let agentPort = 8090;
  for (const member of pullMembers) {
    const info = await fetch(`${simAdmin}/admin/clusters/${member}`).then((r) => (r.ok ? r.json() : undefined), () => undefined);
    if (!info) {
      console.error(`${member}: not found in the simulator; no agent started`);
      continue;
    }
    const tokenFile = path.join(stateDir, `agent-${member}.token`);
    const memberTokenFile = path.join(stateDir, `${member}.member-token`);
    writeFileSync(memberTokenFile, info.token, { mode: 0o600 });
    if (!(await registerAgent(member, tokenFile))) {
      console.error(`${member}: preparing the agent's identity failed; no agent started`);
      continue;
    }
    // the token lives 24 h at most: a fresh one every hour (the agent reads the file on every request)
    setInterval(() => void registerAgent(member, tokenFile), 3_600_000).unref();
    launch(`agent-${member}`, agentMain, {
      CLUSTER_NAME: member,
      GATEWAY_URL: gatewayUrl,
      GATEWAY_TOKEN_FILE: tokenFile,
      GATEWAY_CA_FILE: certFile,
      MEMBER_API_SERVER: info.server,
      MEMBER_TOKEN_FILE: memberTokenFile,
      MEMBER_KUBECONFIG: "",
      PORT: String(agentPort++),
    });
  }
}

console.log(`
Flotilla is running.
  gateway     ${gatewayUrl}   (portal ${gatewayUrl}/, docs ${gatewayUrl}/docs; self-signed certificate ${path.relative(root, certFile)})
  gRPC        ${HOST}:${env.GRPC_PORT ?? "9090"} (TLS)
  kubeconfig  ${kubeconfig}   (admin; every request needs a token: ${path.relative(root, tokenFile)})

Try:
  export KUBECONFIG=${kubeconfig}
  kubectl apply -f examples/failover.yaml
  kubectl get clusters
  npx flotilla get deploy -A -C member1,member2
  kubectl --server ${gatewayUrl}/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy get pods -A
  TOKEN=$(cut -d, -f1 ${path.relative(root, tokenFile)} | head -1)
  curl -s --cacert ${path.relative(root, certFile)} -H "Authorization: Bearer $TOKEN" ${gatewayUrl}/apis/work.karmada.io/v1alpha2/resourcebindings

A service that exits is restarted after 1 s, doubling to 30 s while it keeps failing.
Ctrl-C stops everything.`);
