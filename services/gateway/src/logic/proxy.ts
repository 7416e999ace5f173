import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { BadRequestError } from "@flotilla/api";
import { AUTHENTICATED_GROUP, type UserInfo } from "./rbac.js";

/**
 * The cluster proxy (Karmada's `clusters/proxy` subresource): what a request to
 * `/apis/cluster.karmada.io/v1alpha1/clusters/{name}/proxy/{path}` forwards to the member, and
 * which headers cross in each direction. Pure: the route (http/proxy.ts) does the I/O.
 */

export const CLUSTER_PROXY_PREFIX = "/apis/cluster.karmada.io/v1alpha1/clusters/";

export interface ProxyTarget {
  /** The Cluster's name. */
  cluster: string;
  /**
   * The request to send to the member, relative to its apiEndpoint: an absolute path whose every
   * segment was decoded, checked and encoded again, then the query. It can only name a path on
   * the member: no `.`/`..` segment, no encoded slash or backslash, no scheme or host.
   */
  path: string;
  /** A watch (`watch=true|1`) or a log stream (`follow=true|1`): held open while the member sends. */
  streaming: boolean;
}

const bad = (message: string) => new BadRequestError(message, [{ field: "path", reason: "FieldValueInvalid", message }]);

function decode(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    throw bad(`the proxied path has a malformed percent-escape: ${JSON.stringify(seg.slice(0, 100))}`);
  }
}

/** Encodes one decoded segment; `:` stays as it is (pod and service proxies name ports as `name:port`). */
const encode = (seg: string) => encodeURIComponent(seg).replace(/%3A/gi, ":");

const truthy = (v: string | null) => v === "true" || v === "1";

/**
 * Reads a raw request URL (as it came on the wire, not normalised) of the cluster proxy. Throws a
 * BadRequestError naming `path` for a traversal (`..`, `.`, also percent-encoded), an encoded `/` or
 * `\` inside a segment, a control character, or a malformed escape.
 */
export function proxyTarget(rawUrl: string): ProxyTarget {
  const q = rawUrl.indexOf("?");
  const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const rawQuery = q < 0 ? "" : rawUrl.slice(q + 1);
  if (!rawPath.startsWith(CLUSTER_PROXY_PREFIX)) throw bad(`not a cluster proxy path: ${JSON.stringify(rawPath.slice(0, 100))}`);
  const [rawName = "", sub, ...rest] = rawPath.slice(CLUSTER_PROXY_PREFIX.length).split("/");
  if (sub !== "proxy") throw bad(`not a cluster proxy path: ${JSON.stringify(rawPath.slice(0, 100))}`);
  const cluster = decode(rawName);
  const segs: string[] = [];
  for (const raw of rest) {
    if (raw === "") continue; // empty segments (a doubled or trailing slash) name nothing
    const seg = decode(raw);
    if (seg === "." || seg === "..") throw bad(`the proxied path must not contain a ${JSON.stringify(seg)} segment`);
    if (/[/\\]/.test(seg)) throw bad(`a segment of the proxied path must not contain an encoded "/" or "\\": ${JSON.stringify(raw.slice(0, 100))}`);
    if (/[\x00-\x1f\x7f]/.test(seg)) throw bad("the proxied path must not contain control characters");
    segs.push(encode(seg));
  }
  const trailing = rest.length > 0 && rest[rest.length - 1] === "" && segs.length > 0 ? "/" : "";
  const params = new URLSearchParams(rawQuery);
  const query = params.toString();
  return {
    cluster,
    path: `/${segs.join("/")}${trailing}${query ? `?${query}` : ""}`,
    streaming: truthy(params.get("watch")) || truthy(params.get("follow")),
  };
}

/** RFC 9110 §7.6.1 hop-by-hop fields, plus the ones named in `Connection`. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"]);

function endToEnd(h: IncomingHttpHeaders, drop: (name: string) => boolean): OutgoingHttpHeaders {
  const listed = new Set(
    String(h.connection ?? "")
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(h)) {
    const name = k.toLowerCase();
    if (v === undefined || HOP_BY_HOP.has(name) || listed.has(name) || drop(name)) continue;
    out[name] = v;
  }
  return out;
}

/** Groups upstream Karmada does not impersonate: every user has them on the member anyway. */
const SKIPPED_GROUPS = new Set([AUTHENTICATED_GROUP, "system:unauthenticated"]);

/**
 * The headers sent to the member: the caller's end-to-end headers without its credentials (its
 * Authorization, cookies, any Impersonate-* of its own: the gateway already applied them), and the
 * caller as Impersonate-User / Impersonate-Group, as Karmada's proxy does, so the member's own RBAC
 * decides too. The member's token is added by the client.
 */
export function requestHeaders(incoming: IncomingHttpHeaders, user: UserInfo): OutgoingHttpHeaders {
  const out = endToEnd(incoming, (n) => n === "host" || n === "authorization" || n === "cookie" || n.startsWith("impersonate-") || n.startsWith("x-remote-"));
  out["impersonate-user"] = user.name;
  const groups = user.groups.filter((g) => !SKIPPED_GROUPS.has(g));
  if (groups.length) out["impersonate-group"] = groups;
  return out;
}

/** The member's end-to-end response headers (status and body are copied as they are). */
export function responseHeaders(upstream: IncomingHttpHeaders): OutgoingHttpHeaders {
  return endToEnd(upstream, (n) => n === "set-cookie");
}

/** Why a member did not answer, in words that name no address (the Status a 503 carries). */
export function unreachableReason(err: unknown): string {
  const e = err as { code?: string; name?: string };
  switch (e?.code ?? e?.name) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
    case "EPIPE":
      return "the connection was reset";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "its host name does not resolve";
    case "ETIMEDOUT":
    case "TimeoutError":
      return "it did not answer in time";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "its network is unreachable";
    case "DEPTH_ZERO_SELF_SIGNED_CERT":
    case "SELF_SIGNED_CERT_IN_CHAIN":
    case "UNABLE_TO_VERIFY_LEAF_SIGNATURE":
    case "CERT_HAS_EXPIRED":
    case "ERR_TLS_CERT_ALTNAME_INVALID":
      return "its serving certificate is not trusted (caBundle of the cluster's secret)";
    default:
      return "the request failed";
  }
}

/**
 * The answer for a Pull cluster whose agent holds no tunnel to this gateway replica: the agent is
 * not connected (stopped, or cut off), or it is connected to another replica of the gateway.
 */
export const noTunnelMessage = (cluster: string) =>
  `cluster ${cluster} is in Pull mode and its flotilla-agent has no tunnel to this gateway replica: the agent is not connected, or its tunnel is held by another gateway replica`;
