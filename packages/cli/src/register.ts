import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { GatewayClient, parseAnswer } from "./client.js";
import { RegisterError, agentObjects, agentServiceAccount, tokenPath, tokenRequest, type AgentObject } from "./logic/register.js";

/** examples/agent-rbac.yaml of this repository (src/ and dist/ are both three levels below it). */
export const AGENT_RBAC_FILE = fileURLToPath(new URL("../../../examples/agent-rbac.yaml", import.meta.url));

/** The agent's objects for `member`, from `file` (default: examples/agent-rbac.yaml). */
export async function readAgentObjects(member: string, file = AGENT_RBAC_FILE): Promise<AgentObject[]> {
  return agentObjects(await readFile(file, "utf8"), member);
}

/**
 * Creates the agent's objects through the gateway (existing ones are left as they are) and
 * returns a fresh token of its ServiceAccount (lifetime `expirationSeconds`, cut by the gateway to
 * SERVICE_ACCOUNT_MAX_TOKEN_EXPIRATION).
 */
export async function applyAgentIdentity(gw: GatewayClient, objs: readonly AgentObject[], member: string, expirationSeconds: number): Promise<string> {
  for (const o of objs) {
    const a = await gw.send("POST", o.path, { body: o.doc, contentType: "application/yaml" });
    if (a.status === 409 && (JSON.parse(a.text) as { reason?: string }).reason === "AlreadyExists") continue;
    parseAnswer(a, `creating the agent's ${o.kind}`);
  }
  const a = await gw.send("POST", tokenPath(member), { body: tokenRequest(expirationSeconds) });
  // without SERVICE_ACCOUNT_KEY_FILE the gateway has no token subresource: the account exists, the route does not
  if (a.status === 404 && (await gw.send("GET", tokenPath(member).replace(/\/token$/, ""))).status === 200) throw new RegisterError("the gateway issues no service account tokens (its SERVICE_ACCOUNT_KEY_FILE is not set)");
  const t = parseAnswer<{ status?: { token?: string } }>(a, `POST ${tokenPath(member)}`);
  if (!t.status?.token) throw new Error(`the TokenRequest for ${agentServiceAccount(member)} answered no token`);
  return t.status.token;
}

/**
 * scripts/register-agent.mjs: the agent's identity for `member` applied with an admin `token`, and
 * a token of it written to `tokenFile` (mode 0600). Returns the ServiceAccount's name.
 */
export async function registerAgent(o: { gatewayUrl: string; member: string; tokenFile: string; token?: string; expirationSeconds?: number }): Promise<string> {
  const gw = new GatewayClient({ server: o.gatewayUrl.replace(/\/+$/, ""), ...(o.token ? { token: o.token } : {}), insecure: false, namespace: "default", context: "" });
  try {
    const token = await applyAgentIdentity(gw, await readAgentObjects(o.member), o.member, o.expirationSeconds ?? 86_400);
    await writeFile(o.tokenFile, token, { mode: 0o600 });
    return agentServiceAccount(o.member);
  } finally {
    gw.close();
  }
}
