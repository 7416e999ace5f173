// Joins the simulated member clusters to Flotilla through the gateway's REST API, the way
// `karmadactl join` does for a real cluster: a Secret `karmada-cluster/<name>` holding the bearer
// token, and a Cluster with spec.apiEndpoint, spec.secretRef and the member's provider, region,
// zone and labels. Idempotent: existing objects are updated, a Cluster keeps its taints and status.
//
//   FLOTILLA_TOKEN=<token> node scripts/join-members.mjs [gatewayUrl] [adminUrl] [token]
//                                         (or GATEWAY_URL / MEMBER_SIM_ADMIN_URL / FLOTILLA_TOKEN)
//
// The gateway authenticates every request: the token (`token`, or FLOTILLA_TOKEN; prefer the
// environment, an argument shows in `ps`) is sent as `Authorization: Bearer` on every gateway
// call, never to the simulator. It must be allowed to write Secrets in karmada-cluster and
// Clusters (e.g. a token of group system:masters). For an https gateway with a self-signed
// certificate, give the certificate in NODE_EXTRA_CA_CERTS.
//
// PULL_MEMBERS (or `pull`, comma-separated names) are skipped: those members run in Pull mode, and
// their flotilla-agent registers them (scripts/register-agent.mjs prepares its identity).
//
// MEMBER_HOST (or `memberHost`) replaces the host of every member URL, for a simulator that
// listens on 0.0.0.0 in another container (docker compose: MEMBER_HOST=member-sim).
// No imports beyond Node itself, so it also runs in a stock node image.
import { pathToFileURL } from "node:url";

const CREDENTIAL_NAMESPACE = "karmada-cluster";

/** One HTTP call; `token` (gateway calls only) goes in `Authorization: Bearer`. */
async function call(method, url, body, token) {
  const headers = { ...(body ? { "content-type": "application/json" } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) };
  const res = await fetch(url, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

function fail(what, r) {
  const hint = r.status === 401 ? " (give the gateway's token: FLOTILLA_TOKEN or `token`)" : r.status === 403 ? " (the token may not write Secrets in karmada-cluster and Clusters)" : "";
  const e = new Error(`${what}: HTTP ${r.status}: ${r.json?.message ?? r.text.slice(0, 200)}${hint}`);
  // retrying does not help a token the gateway refuses
  e.refused = r.status === 401 || r.status === 403;
  return e;
}

/** Creates the object, or replaces the stored one with `merge(current)` when it exists. */
async function upsert(collection, name, body, merge, token) {
  const c = await call("POST", collection, body, token);
  if (c.status === 201) return "created";
  if (c.status !== 409) throw fail(`creating ${collection}/${name}`, c);
  for (let attempt = 0; attempt < 5; attempt++) {
    const cur = await call("GET", `${collection}/${name}`, undefined, token);
    if (cur.status !== 200) throw fail(`reading ${collection}/${name}`, cur);
    const u = await call("PUT", `${collection}/${name}`, merge(cur.json), token);
    if (u.status === 200) return "updated";
    if (u.status !== 409) throw fail(`updating ${collection}/${name}`, u);
  }
  throw new Error(`updating ${collection}/${name}: kept conflicting`);
}

/**
 * Reads the simulator's members from `${adminUrl}/admin/clusters` and joins each one through
 * the gateway, authenticated with `token` (default FLOTILLA_TOKEN). Returns the names joined.
 */
export async function joinMembers({ gatewayUrl, adminUrl, token = process.env.FLOTILLA_TOKEN, memberHost = process.env.MEMBER_HOST, pull = process.env.PULL_MEMBERS ?? "", log = console.log }) {
  const pullMembers = new Set(pull.split(",").map((s) => s.trim()).filter(Boolean));
  const gw = gatewayUrl.replace(/\/+$/, "");
  const admin = await call("GET", `${adminUrl.replace(/\/+$/, "")}/admin/clusters`);
  if (admin.status !== 200) throw fail("listing the simulator's clusters", admin);
  const joined = [];
  for (const m of admin.json.clusters ?? []) {
    if (pullMembers.has(m.name)) {
      log(`skipped ${m.name} (Pull mode: its agent registers it)`);
      continue;
    }
    let server = m.server;
    if (memberHost) {
      const u = new URL(server);
      u.hostname = memberHost;
      server = u.toString().replace(/\/$/, "");
    }
    const secrets = `${gw}/api/v1/namespaces/${CREDENTIAL_NAMESPACE}/secrets`;
    await upsert(
      secrets,
      m.name,
      { apiVersion: "v1", kind: "Secret", metadata: { name: m.name, namespace: CREDENTIAL_NAMESPACE }, type: "Opaque", stringData: { token: m.token } },
      (cur) => ({ ...cur, stringData: { token: m.token } }),
      token,
    );
    const spec = {
      syncMode: "Push",
      apiEndpoint: server,
      secretRef: { namespace: CREDENTIAL_NAMESPACE, name: m.name },
      ...(m.provider ? { provider: m.provider } : {}),
      ...(m.region ? { region: m.region } : {}),
      ...(m.zone ? { zones: [m.zone] } : {}),
    };
    const labels = m.labels ?? {};
    const how = await upsert(
      `${gw}/apis/cluster.karmada.io/v1alpha1/clusters`,
      m.name,
      { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: m.name, labels }, spec },
      (cur) => ({ ...cur, metadata: { ...cur.metadata, labels: { ...(cur.metadata.labels ?? {}), ...labels } }, spec: { ...cur.spec, ...spec } }),
      token,
    );
    log(`joined ${m.name} (${server}, ${how})`);
    joined.push(m.name);
  }
  return joined;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const gatewayUrl = process.argv[2] ?? process.env.GATEWAY_URL ?? "http://127.0.0.1:8080";
  const adminUrl = process.argv[3] ?? process.env.MEMBER_SIM_ADMIN_URL ?? "http://127.0.0.1:7070";
  const token = process.argv[4] ?? process.env.FLOTILLA_TOKEN;
  if (!token) console.error("no token (FLOTILLA_TOKEN or a third argument): the gateway will refuse the calls");
  // the gateway and the simulator may still be starting (docker compose): retry for a while
  let lastError;
  for (let i = 0; i < 60; i++) {
    try {
      await joinMembers({ gatewayUrl, adminUrl, token });
      process.exit(0);
    } catch (e) {
      lastError = e;
      if (e?.refused) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  console.error(`joining members failed: ${lastError?.message}`);
  process.exit(1);
}
