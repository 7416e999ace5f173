import type { Cluster, KubeObject } from "./types.js";

/**
 * How the control plane reaches a member's API server with its credentials, and which
 * endpoints it refuses to send a member's token to. One set of rules for every component that
 * talks to members (the execution service's probes and Work applies, the gateway's cluster proxy).
 */

/** Where a member's API server is and how to authenticate to it. */
export interface MemberEndpoint {
  /** The API server URL (Cluster.spec.apiEndpoint), e.g. https://10.0.0.1:6443 or http://127.0.0.1:7101. */
  server: string;
  /** Bearer token. */
  token?: string;
  /** PEM CA bundle (the Secret's `caBundle`), as text or base64. */
  caData?: string;
  /** Cluster.spec.insecureSkipTLSVerification. */
  insecureSkipTLSVerify?: boolean;
  /** Cluster.spec.proxyURL (http, https or socks5). */
  proxyURL?: string;
}

/** Which plain-http member endpoints may be used (tokens then travel in clear): none, loopback ones (a local simulator), or any. */
export type HttpMembers = "none" | "loopback" | "any";

export interface EndpointPolicy {
  allowHttp: HttpMembers;
}

const bare = (host: string) => host.replace(/^\[|\]$/g, "").toLowerCase();
/** 4 for a dotted IPv4 address, 6 for an IPv6 one (URL hostnames are already normalised), 0 for a name. */
const ipVersion = (h: string) => (/^\d{1,3}(\.\d{1,3}){3}$/.test(h) ? 4 : h.includes(":") ? 6 : 0);

export function isLoopbackHost(host: string): boolean {
  const h = bare(host);
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Link-local (169.254/16: cloud metadata services; fe80::/10), unspecified and multicast addresses: never a member. */
function forbiddenAddress(host: string): string | undefined {
  const h = bare(host);
  if (ipVersion(h) === 4) {
    const [a, b] = h.split(".").map(Number) as [number, number];
    if (a === 169 && b === 254) return "a link-local address";
    if (a === 0) return "an unspecified address";
    if (a >= 224) return "a multicast or reserved address";
  } else if (ipVersion(h) === 6) {
    if (/^fe[89ab]/.test(h)) return "a link-local address";
    if (h === "::") return "an unspecified address";
    if (h.startsWith("ff")) return "a multicast address";
    // an IPv4-mapped address (URL writes ::ffff:169.254.169.254 as ::ffff:a9fe:a9fe)
    const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
    if (dotted) return forbiddenAddress(dotted[1]!);
    const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(h);
    if (hex) {
      const [hi, lo] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
      return forbiddenAddress(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
    }
  }
  return undefined;
}

/**
 * Why Flotilla must not connect to (and send a member's token to) this URL, or
 * undefined: https only (http as the policy allows), no credentials in the URL, never a
 * link-local, unspecified or multicast address. `what` names the field in the reason.
 */
export function endpointProblem(raw: string, policy: EndpointPolicy, what = "spec.apiEndpoint"): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return `${what} ${JSON.stringify(raw.slice(0, 200))} is not a URL`;
  }
  if (u.username || u.password) return `${what} must not hold credentials`;
  if (u.protocol === "http:") {
    if (policy.allowHttp === "none") return `${what} is http: members are reached over https (MEMBER_ALLOW_HTTP=loopback|any allows plain http)`;
    if (policy.allowHttp === "loopback" && !isLoopbackHost(u.hostname)) return `${what} is http to a host that is not loopback (MEMBER_ALLOW_HTTP=loopback)`;
  } else if (u.protocol !== "https:") return `${what} has the scheme ${JSON.stringify(u.protocol.slice(0, -1))}: only https (or http) is used`;
  const bad = forbiddenAddress(u.hostname);
  return bad ? `${what} points at ${bad}` : undefined;
}

/** The Secret keys Karmada's join writes (karmadactl join: Secret `<cluster>` in `karmada-cluster`). */
export const TokenKey = "token";
export const CABundleKey = "caBundle";

export type EndpointResult = { ok: true; endpoint: MemberEndpoint } | { ok: false; reason: string };

function secretValue(secret: KubeObject, key: string): string | undefined {
  const data = secret.data as Record<string, string> | undefined;
  const v = data?.[key];
  if (typeof v === "string" && v !== "") return Buffer.from(v, "base64").toString("utf8");
  const sd = secret.stringData as Record<string, string> | undefined;
  const s = sd?.[key];
  return typeof s === "string" && s !== "" ? s : undefined;
}

/**
 * How to reach a member: `spec.apiEndpoint`, the bearer token and CA bundle of the Secret
 * `spec.secretRef` names (`data.token` base64, or `stringData.token`; `caBundle` likewise),
 * `spec.insecureSkipTLSVerification` and `spec.proxyURL`. The reason never contains a secret value.
 */
export function endpointOf(cluster: Cluster, secret: KubeObject | undefined, policy: EndpointPolicy = { allowHttp: "none" }): EndpointResult {
  const spec = cluster.spec ?? {};
  if (!spec.apiEndpoint) return { ok: false, reason: "the cluster has no spec.apiEndpoint" };
  const problem = endpointProblem(spec.apiEndpoint, policy) ?? (spec.proxyURL ? proxyProblem(spec.proxyURL) : undefined);
  if (problem) return { ok: false, reason: problem };
  const ref = spec.secretRef;
  let token: string | undefined;
  let caData: string | undefined;
  if (ref?.name) {
    if (!secret) return { ok: false, reason: `the secret ${ref.namespace}/${ref.name} named by spec.secretRef does not exist` };
    // a member's token goes only to the endpoint of the Cluster that owns it
    const owner = (secret.metadata.ownerReferences ?? []).find((o) => o.kind === "Cluster" && o.apiVersion?.startsWith("cluster.karmada.io/"));
    if (owner && cluster.metadata.uid && owner.uid !== cluster.metadata.uid) return { ok: false, reason: `the secret ${ref.namespace}/${ref.name} belongs to cluster ${JSON.stringify(owner.name)}` };
    token = secretValue(secret, TokenKey);
    caData = secretValue(secret, CABundleKey);
    if (!token) return { ok: false, reason: `the secret ${ref.namespace}/${ref.name} has no ${TokenKey}` };
  }
  return {
    ok: true,
    endpoint: {
      server: spec.apiEndpoint,
      ...(token ? { token } : {}),
      ...(caData ? { caData } : {}),
      ...(spec.insecureSkipTLSVerification ? { insecureSkipTLSVerify: true } : {}),
      ...(spec.proxyURL ? { proxyURL: spec.proxyURL } : {}),
    },
  };
}

function proxyProblem(raw: string): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return "spec.proxyURL is not a URL";
  }
  if (!["http:", "https:", "socks5:"].includes(u.protocol)) return `spec.proxyURL has the scheme ${JSON.stringify(u.protocol.slice(0, -1))}: http, https or socks5`;
  const bad = forbiddenAddress(u.hostname);
  return bad ? `spec.proxyURL points at ${bad}` : undefined;
}

/** Whether the Cluster's spec.secretRef names the Secret `namespace/name`. */
export function namesSecret(c: Cluster, namespace: string, name: string): boolean {
  const r = c.spec?.secretRef;
  return r?.name === name && (r.namespace ?? "") === namespace;
}

/**
 * Of the Clusters naming one Secret that no Cluster owns, the one it serves: the Cluster of the
 * Secret's own name (as a join writes `karmada-cluster/<cluster>`), else the oldest (creation
 * time, then name). A Cluster written later cannot borrow another member's token.
 */
export function credentialHolder(secretName: string, claimants: readonly Cluster[]): Cluster | undefined {
  return (
    claimants.find((c) => c.metadata.name === secretName) ??
    [...claimants].sort((a, b) => String(a.metadata.creationTimestamp ?? "").localeCompare(String(b.metadata.creationTimestamp ?? "")) || (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""))[0]
  );
}

/**
 * endpointOf, and for a Secret that no Cluster owns (no Cluster ownerReference) only for its
 * credentialHolder among `clusters` (every Cluster, or at least those naming the same Secret):
 * a Cluster written later cannot borrow another member's token by naming its Secret.
 */
export function memberEndpoint(cluster: Cluster, secret: KubeObject | undefined, clusters: Iterable<Cluster>, policy?: EndpointPolicy): EndpointResult {
  const e = endpointOf(cluster, secret, policy);
  const ref = cluster.spec?.secretRef;
  if (!e.ok || !secret || !ref?.name || (secret.metadata.ownerReferences ?? []).some((o) => o.kind === "Cluster")) return e;
  const name = cluster.metadata.name ?? "";
  const claimants = [cluster, ...[...clusters].filter((c) => c.metadata.name !== name && namesSecret(c, ref.namespace ?? "", ref.name!))];
  const holder = credentialHolder(ref.name, claimants)!;
  return holder.metadata.name === name ? e : { ok: false, reason: `the secret ${ref.namespace}/${ref.name} is the credential of cluster ${JSON.stringify(holder.metadata.name)}` };
}
