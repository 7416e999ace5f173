import { FlotillaError } from "@flotilla/api";

/**
 * The agent tunnel's wire format: every WebSocket message is one binary frame,
 * `[type: u8][stream: u32 big-endian][payload]`. The gateway opens streams (one per proxied
 * request, ids it picks); both sides send the body of their direction as DATA frames closed by END;
 * RESET ends a stream at once from either side. Pure: encoding, decoding and checking what the
 * other side sent (a frame that does not parse is a protocol error that closes the tunnel).
 */

export const FrameType = {
  /** gateway → agent: `{method, path, headers, body}` opens the stream. */
  Request: 1,
  /** either way: a chunk of the body of the sender's direction. */
  Data: 2,
  /** either way: the sender's body is complete. */
  End: 3,
  /** agent → gateway: `{status, headers}`, the member's answer started. */
  Response: 4,
  /** either way: the stream is over (`{code?}`: why the member did not answer, an error code such as ECONNREFUSED). */
  Reset: 5,
} as const;
export type FrameType = (typeof FrameType)[keyof typeof FrameType];

export interface Frame {
  type: FrameType;
  stream: number;
  payload: Uint8Array;
}

export type Headers = Record<string, string | string[]>;

export interface RequestHead {
  method: string;
  /** Absolute path and query on the member (already checked and re-encoded by the gateway). */
  path: string;
  headers: Headers;
  /** Whether DATA frames follow (else the request has no body). */
  body: boolean;
}

export interface ResponseHead {
  status: number;
  headers: Headers;
}

export interface ResetInfo {
  /** A Node error code or name (ECONNREFUSED, TimeoutError, …); the gateway words it. */
  code?: string;
}

/** The largest frame either side accepts (a body chunk is split below it). */
export const MAX_FRAME_BYTES = 1 << 20;
/** Body chunks are sent in pieces of at most this many bytes. */
export const MAX_CHUNK_BYTES = 64 * 1024;

/**
 * The other side broke the tunnel's protocol (a frame that does not parse or does not belong):
 * the tunnel is closed and the requests on it fail (as TunnelRequestError). It stays within the
 * tunnel; should one reach a caller it is an `InternalError` (500, INTERNAL, retryable: the agent
 * reconnects), no fault of the caller's.
 */
export class ProtocolError extends FlotillaError {
  override readonly name = "ProtocolError";
  constructor(message: string, options?: { cause?: unknown }) {
    super("InternalError", message, options);
  }
}

const TYPES = new Set<number>(Object.values(FrameType));
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export function encodeFrame(type: FrameType, stream: number, payload: Uint8Array | string = new Uint8Array(0)): Uint8Array {
  const body = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
  const out = new Uint8Array(5 + body.length);
  out[0] = type;
  new DataView(out.buffer).setUint32(1, stream >>> 0, false);
  out.set(body, 5);
  return out;
}

export const encodeJson = (type: FrameType, stream: number, value: unknown) => encodeFrame(type, stream, JSON.stringify(value));

export function decodeFrame(data: Uint8Array): Frame {
  if (data.length < 5) throw new ProtocolError(`a frame of ${data.length} bytes is shorter than its header`);
  if (data.length > MAX_FRAME_BYTES + 5) throw new ProtocolError(`a frame of ${data.length} bytes is over the limit`);
  const type = data[0]!;
  if (!TYPES.has(type)) throw new ProtocolError(`unknown frame type ${type}`);
  const stream = new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(1, false);
  if (stream === 0) throw new ProtocolError("stream 0 is not a stream");
  return { type: type as FrameType, stream, payload: data.subarray(5) };
}

function json(payload: Uint8Array, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(payload));
  } catch {
    throw new ProtocolError(`the ${what} frame is not JSON`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new ProtocolError(`the ${what} frame is not an object`);
  return v as Record<string, unknown>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function headers(v: unknown, what: string): Headers {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new ProtocolError(`the ${what} headers are not an object`);
  const out: Headers = {};
  for (const [k, raw] of Object.entries(v)) {
    if (!TOKEN.test(k)) throw new ProtocolError(`the ${what} header name ${JSON.stringify(k.slice(0, 50))} is not a token`);
    const vals = Array.isArray(raw) ? raw : [raw];
    if (!vals.every((x) => typeof x === "string" && !/[\r\n\0]/.test(x))) throw new ProtocolError(`the ${what} header ${k} has a value that is not a header value`);
    out[k.toLowerCase()] = Array.isArray(raw) ? (raw as string[]) : (raw as string);
  }
  return out;
}

/** The request the agent is asked to make (checked: a known method, a path on the member only). */
export function parseRequestHead(payload: Uint8Array): RequestHead {
  const v = json(payload, "request");
  const method = v.method;
  const path = v.path;
  if (typeof method !== "string" || !METHODS.has(method)) throw new ProtocolError(`the method ${JSON.stringify(String(method).slice(0, 20))} is not proxied`);
  if (typeof path !== "string" || !path.startsWith("/") || path.startsWith("//") || /[\s\0-\x1f\x7f#]/.test(path)) throw new ProtocolError("the request path is not an absolute path on the member");
  return { method, path, headers: headers(v.headers, "request"), body: v.body === true };
}

/** The member's answer as the agent relays it. */
export function parseResponseHead(payload: Uint8Array): ResponseHead {
  const v = json(payload, "response");
  const status = v.status;
  if (typeof status !== "number" || !Number.isInteger(status) || status < 100 || status > 599) throw new ProtocolError("the response status is not an HTTP status code");
  return { status, headers: headers(v.headers, "response") };
}

export function parseReset(payload: Uint8Array): ResetInfo {
  if (payload.length === 0) return {};
  let v: Record<string, unknown>;
  try {
    v = json(payload, "reset");
  } catch {
    return {};
  }
  return typeof v.code === "string" && /^[A-Za-z0-9_]{1,40}$/.test(v.code) ? { code: v.code } : {};
}

/** Splits a body chunk into frames' worth of pieces. */
export function* chunks(data: Uint8Array, max = MAX_CHUNK_BYTES): Generator<Uint8Array> {
  for (let i = 0; i < data.length; i += max) yield data.subarray(i, Math.min(data.length, i + max));
}

/** The path of a cluster's tunnel on the gateway. */
export const tunnelPath = (cluster: string) => `/apis/cluster.karmada.io/v1alpha1/clusters/${encodeURIComponent(cluster)}/tunnel`;

/** The cluster a tunnel request names, or undefined when the URL is not a tunnel's. */
export function tunnelCluster(rawUrl: string): string | undefined {
  const path = rawUrl.split("?", 1)[0]!;
  const m = /^\/apis\/cluster\.karmada\.io\/v1alpha1\/clusters\/([^/]+)\/tunnel\/?$/.exec(path);
  if (!m) return undefined;
  try {
    const name = decodeURIComponent(m[1]!);
    return /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) && name.length <= 253 ? name : undefined;
  } catch {
    return undefined;
  }
}

/** The prefix of the ServiceAccounts `flotilla register` creates for an agent: `flotilla-agent-<cluster>` in karmada-cluster. */
export const AGENT_SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:karmada-cluster:flotilla-agent-";

/**
 * Whether `user` may hold the tunnel of `cluster` as far as its identity says: an agent's
 * ServiceAccount (`flotilla-agent-<x>` in karmada-cluster) only for cluster x, whatever RBAC grants
 * it; any other identity is left to RBAC (`create` on `clusters/tunnel`).
 */
export function identityMayTunnel(user: string, cluster: string): boolean {
  if (!user.startsWith(AGENT_SERVICE_ACCOUNT_PREFIX)) return true;
  return user.slice(AGENT_SERVICE_ACCOUNT_PREFIX.length) === cluster;
}
