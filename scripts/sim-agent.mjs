// Runs flotilla-agent for one member of the member-cluster simulator in Pull mode, where the
// simulator and the gateway run in other containers (docker compose, the Kubernetes dev overlay),
// as `npm start` does on one host: reads the member's address and token from the simulator's
// admin API, prepares the agent's identity through the gateway (scripts/register-agent.mjs: the
// ServiceAccount flotilla-agent-<member> and the rights of examples/agent-rbac.yaml) with an
// administrator's token, writes the agent's token (renewed every hour), then runs the agent
// (services/agent/dist/main.js) in this process with its settings from the environment.
//
//   FLOTILLA_TOKEN=<admin token> node scripts/sim-agent.mjs <gatewayUrl> <simAdminUrl> <member> <stateDir>
//
// MEMBER_HOST replaces the host of the member's URL (the simulator listens on 0.0.0.0 in another
// container). For an https gateway with a self-signed certificate give it in NODE_EXTRA_CA_CERTS
// and GATEWAY_CA_FILE. A real member runs the agent alone (see README, "Pull-mode members").
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { registerAgent } from "./register-agent.mjs";

const [gatewayUrl, adminUrl, member, stateDir] = process.argv.slice(2);
if (!gatewayUrl || !adminUrl || !member || !stateDir) {
  console.error("usage: FLOTILLA_TOKEN=<admin token> node scripts/sim-agent.mjs <gatewayUrl> <simAdminUrl> <member> <stateDir>");
  process.exit(2);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Retries `fn` while the gateway and the simulator start (up to 5 minutes). */
async function retry(what, fn) {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (i >= 100) throw e;
      console.error(`${what}: ${e.message}; retrying`);
      await sleep(3000);
    }
  }
}

const info = await retry(`reading ${member} from the simulator`, async () => {
  const r = await fetch(`${adminUrl.replace(/\/+$/, "")}/admin/clusters/${encodeURIComponent(member)}`);
  if (!r.ok) throw new Error(`HTTP ${r.status}`);
  return r.json();
});
const server = new URL(info.server);
if (process.env.MEMBER_HOST) server.hostname = process.env.MEMBER_HOST;
const memberTokenFile = path.join(stateDir, `${member}.member-token`);
const tokenFile = path.join(stateDir, `agent-${member}.token`);
writeFileSync(memberTokenFile, info.token, { mode: 0o600 });
await retry(`preparing the agent's identity for ${member}`, () => registerAgent({ gatewayUrl, member, tokenFile }));
// a token lives 24 h at most: a fresh one every hour (the agent reads the file on every request)
setInterval(() => registerAgent({ gatewayUrl, member, tokenFile }).catch((e) => console.error(`renewing the agent's token: ${e.message}`)), 3_600_000).unref();

Object.assign(process.env, {
  CLUSTER_NAME: member,
  GATEWAY_URL: gatewayUrl,
  GATEWAY_TOKEN_FILE: tokenFile,
  MEMBER_API_SERVER: server.href.replace(/\/$/, ""),
  MEMBER_TOKEN_FILE: memberTokenFile,
  MEMBER_KUBECONFIG: "",
});
// the token of the administrator is not the agent's: it does not reach the agent's settings
delete process.env.FLOTILLA_TOKEN;
await import(path.join(path.dirname(fileURLToPath(import.meta.url)), "../services/agent/dist/main.js"));
