// Prepares a Pull-mode member's flotilla-agent on the control plane, the way `karmadactl register`
// does for a karmada-agent: `flotilla register <member> --apply --token-file <file>` (packages/cli)
// as a script, for `npm start` and the agent's tests: applies the agent's least-privilege identity
// (examples/agent-rbac.yaml with "member3" replaced by the member's name: a ServiceAccount in
// karmada-cluster, its ClusterRole/Role and bindings) and writes a fresh token of that
// ServiceAccount (TokenRequest) to a file the agent reads (GATEWAY_TOKEN_FILE). Idempotent:
// existing objects are left as they are.
//
//   FLOTILLA_TOKEN=<admin token> node scripts/register-agent.mjs <gatewayUrl> <member> <token-file>
//
// For an https gateway with a self-signed certificate, give it in NODE_EXTRA_CA_CERTS.
// Needs the build of packages/cli (npm run build).
import { pathToFileURL } from "node:url";
import { registerAgent as register } from "@flotilla/cli";

/**
 * Applies the agent's identity for `member` and writes a token for it to `tokenFile` (lifetime
 * `expirationSeconds`, cut by the gateway to SERVICE_ACCOUNT_MAX_TOKEN_EXPIRATION). Returns the
 * ServiceAccount's name.
 */
export function registerAgent({ gatewayUrl, member, tokenFile, token = process.env.FLOTILLA_TOKEN, expirationSeconds = 86_400 }) {
  return register({ gatewayUrl, member, tokenFile, token, expirationSeconds });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [gatewayUrl, member, tokenFile] = process.argv.slice(2);
  if (!gatewayUrl || !member || !tokenFile) {
    console.error("usage: FLOTILLA_TOKEN=<admin token> node scripts/register-agent.mjs <gatewayUrl> <member> <token-file>");
    process.exit(2);
  }
  try {
    const sa = await registerAgent({ gatewayUrl, member, tokenFile });
    console.log(`agent identity for ${member}: karmada-cluster/${sa}, token in ${tokenFile}`);
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
