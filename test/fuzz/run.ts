// The gateway under fuzz and the loop that drives it: the gateway runs as a process of its own
// (from its TypeScript sources, against a fresh database and JetStream stream, with a guard that
// exits it on prototype pollution), and every generated request is checked:
// - HTTP: never a 5xx; every 4xx a Kubernetes Status (an Invalid one with causes naming fields);
// - gRPC: never INTERNAL, UNKNOWN, DATA_LOSS, UNAVAILABLE or DEADLINE_EXCEEDED;
// - a rejected write wrote nothing (the outbox, which records every object write, is unchanged);
// - no response carries the seeded Secret's value;
// - the process is alive after every request and answers /healthz at the end.
// Most requests carry the administrator's token (group system:masters), so that they get past
// authentication and exercise admission; a share (UNAUTHENTICATED_SHARE) carries none, an unknown
// token or a malformed Authorization header, and must be refused: HTTP 401 (a Status) on every path
// but the public ones, 429 once this address has failed too often (the gateway slows guessing),
// or a 400 for a request fastify refuses before routing; gRPC never OK.
import http from "node:http";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { create, toBinary, type DescMessage } from "@bufbuild/protobuf";
import {
  CreateRequestSchema,
  DeleteRequestSchema,
  GetRequestSchema,
  ListRequestSchema,
  ObjectService,
  UpdateRequestSchema,
} from "@flotilla/proto";
import { grpcServiceDefinition } from "@flotilla/proto/grpc";
import { MAX_REQUEST_BYTES } from "@flotilla/api";
import { freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { ProcessLogs } from "../load/lib/logs.js";
import { freePort } from "../load/lib/proc.js";
import { adminTokenFile, bearer, deleteStream, isolatedEnv, launch, root, type Managed } from "../load/lib/stack.js";
import { KINDS, Rng, SEEDED_NAME, SEEDED_NAMESPACES, SEEDED_SECRET, collection, generateCase, validObject, type FuzzCase, type GrpcCase, type GrpcMethod, type HttpCase } from "./generate.js";

export interface FuzzTarget {
  url: string;
  grpcAddress: string;
  /** The administrator's bearer token (group system:masters). */
  token: string;
  db: TestDatabase;
  proc: Managed;
  logs: ProcessLogs;
  stop(): Promise<void>;
}

/** Starts the gateway as a process (sources through tsx, prototype guard loaded) on free ports, and seeds a Secret. */
export async function startFuzzTarget(): Promise<FuzzTarget> {
  const db = await freshDatabase({ max: 2 });
  const env = isolatedEnv(db, "FUZZ");
  const [port, grpcPort] = [await freePort(), await freePort()];
  const logs = new ProcessLogs(undefined, 20_000);
  const tokens = adminTokenFile();
  const proc = launch("gateway", path.join(root, "services/gateway/src/main.ts"), [], logs, {
    env: { ...env, PORT: String(port), GRPC_PORT: String(grpcPort), LOG_LEVEL: "warn", DATABASE_POOL_SIZE: "4", SCHEDULER_GRPC_URL: "127.0.0.1:1", TOKEN_AUTH_FILE: tokens.file },
    nodeArgs: ["--conditions=source", "--import", "tsx", "--import", path.join(root, "test/fuzz/prototype-guard.mjs")],
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await proc.stop(5_000);
    tokens.remove();
    await deleteStream(env.EVENTS_STREAM).catch(() => undefined);
    await db.drop();
  };
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (proc.exit) throw new Error(`the gateway exited while starting:\n${logs.tail()}`);
      if (await fetch(`${url}/readyz`).then((r) => r.ok, () => false)) break;
      if (Date.now() > deadline) throw new Error(`the gateway did not get ready:\n${logs.tail()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const post = async (coll: string, body: unknown) => {
      const res = await fetch(`${url}${coll}`, { method: "POST", headers: { "content-type": "application/json", ...bearer(tokens.token) }, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`seeding ${coll} failed: ${res.status} ${await res.text()}`);
    };
    await post(`/api/v1/namespaces/${SEEDED_SECRET.namespace}/secrets`, { apiVersion: "v1", kind: "Secret", metadata: { name: SEEDED_SECRET.name }, stringData: { token: SEEDED_SECRET.token } });
    // an object of every kind for the requests to read, replace, patch and delete
    for (const k of KINDS) {
      for (const ns of k.namespaced ? SEEDED_NAMESPACES : [""]) await post(collection(k, ns), validObject(k, SEEDED_NAME, ns));
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { url, grpcAddress: `127.0.0.1:${grpcPort}`, token: tokens.token, db, proc, logs, stop };
}

export interface FuzzFailure {
  index: number;
  case: string;
  problem: string;
}

export interface FuzzResult {
  requests: number;
  /** HTTP status codes and gRPC status names, with how often each was answered. */
  statuses: Record<string, number>;
  /** Requests the client could not send as generated (e.g. a gRPC message protobuf-es refuses to encode). */
  unsent: number;
  rejectedWrites: number;
  /** Requests sent without valid credentials (and refused). */
  unauthenticated: number;
  failures: FuzzFailure[];
  seconds: number;
}

interface HttpAnswer {
  status: number;
  body: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function sendHttp(url: string, c: HttpCase, timeoutMs: number): Promise<HttpAnswer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...c.headers };
    if (c.body) headers["content-length"] = c.body.length;
    const req = http.request({ host: u.hostname, port: u.port, method: c.method, path: c.path, headers, agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end(c.body);
  });
}

const REQUEST_SCHEMAS: Record<GrpcMethod, DescMessage> = { get: GetRequestSchema, list: ListRequestSchema, create: CreateRequestSchema, update: UpdateRequestSchema, delete: DeleteRequestSchema };

/** Methods that never answer bad input: a crash, a bug or a hang. */
const GRPC_FAILURES = new Set([grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.DATA_LOSS, grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]);

class GrpcDriver {
  private readonly client: grpc.Client & Record<string, unknown>;
  constructor(address: string) {
    // every message is encoded here (a generated one protobuf-es cannot encode is not sent), then sent as bytes
    const def = Object.fromEntries(Object.entries(grpcServiceDefinition(ObjectService)).map(([n, m]) => [n, { ...m, requestSerialize: (b: Buffer) => b }]));
    const Client = grpc.makeGenericClientConstructor(def, "ObjectService");
    this.client = new Client(address, grpc.credentials.createInsecure()) as never;
  }
  /** The encoded request, or undefined when protobuf-es cannot encode it. */
  encode(c: GrpcCase): Buffer | undefined {
    if (Buffer.isBuffer(c.request)) return c.request;
    try {
      return Buffer.from(toBinary(REQUEST_SCHEMAS[c.method], create(REQUEST_SCHEMAS[c.method], c.request as never)));
    } catch {
      return undefined;
    }
  }
  /** Resolves to the code the call ended with, and its message (or answer) as text; `authorization` goes in the metadata. */
  call(method: GrpcMethod, bytes: Buffer, timeoutMs: number, authorization: string | undefined): Promise<{ code: grpc.status; text: string }> {
    const deadline = new Date(Date.now() + timeoutMs);
    const md = new grpc.Metadata();
    if (authorization !== undefined) md.set("authorization", authorization);
    return new Promise((resolve) => {
      (this.client[method] as (r: unknown, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, v: unknown) => void) => void).call(this.client, bytes, md, { deadline }, (e, v) => {
        if (e) resolve({ code: e.code, text: `${e.details} ${JSON.stringify(e.metadata?.getMap() ?? {})}` });
        else resolve({ code: grpc.status.OK, text: show(v) });
      });
    });
  }
  close(): void {
    this.client.close();
  }
}

/** JSON for reports; a value nested too deep for JSON.stringify is shown as such. */
function show(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? String(x) : x));
  } catch {
    return "<too deep to print>";
  }
}

function describeCase(c: FuzzCase, auth: Credentials): string {
  const as = auth.name === "admin" ? "" : ` (as: ${auth.name})`;
  if (c.kind === "grpc") {
    const req = Buffer.isBuffer(c.request) ? `<${c.request.length} bytes>` : show(c.request);
    return `gRPC ${c.method} (${c.note})${as} ${req.slice(0, 300)}`;
  }
  const body = c.body ? ` body(${c.body.length} B)=${JSON.stringify(c.body.subarray(0, 200).toString("utf8"))}` : "";
  return `${c.method} ${c.path.slice(0, 200)} [${c.note}]${as} ${JSON.stringify(c.headers)}${body}`;
}

/** The share of requests sent without valid credentials. */
const UNAUTHENTICATED_SHARE = 0.1;

/** What a request authenticates with: the administrator's token, or something the gateway must refuse. */
interface Credentials {
  name: string;
  /** The Authorization header (gRPC: `authorization` metadata); undefined = none. */
  authorization: string | undefined;
}

/**
 * The credentials of the next request, from a generator of their own (so that a seed gives the
 * same requests with or without this): mostly the administrator's token.
 */
function credentials(r: Rng, token: string): Credentials {
  if (!r.chance(UNAUTHENTICATED_SHARE)) return { name: "admin", authorization: `Bearer ${token}` };
  return r.pick<Credentials>([
    { name: "no token", authorization: undefined },
    { name: "unknown token", authorization: `Bearer ${token.slice(0, -1)}${token.endsWith("x") ? "y" : "x"}` },
    { name: "empty bearer", authorization: "Bearer " },
    { name: "basic", authorization: `Basic ${Buffer.from("admin:admin").toString("base64")}` },
    { name: "token without scheme", authorization: token },
    { name: "two tokens", authorization: `Bearer ${token} ${token}` },
  ]);
}

const PUBLIC_PATHS = new Set(["/healthz", "/readyz", "/livez", "/", "/docs"]);

/** What is wrong with the answer to a request without valid credentials, or undefined. */
function unauthenticatedHttpProblem(c: HttpCase, a: HttpAnswer): string | undefined {
  if (PUBLIC_PATHS.has(c.path.split("?")[0]!)) return undefined;
  // 429: too many failed authentications from this address; 400: fastify refuses a malformed URL
  // (a bad percent-escape) before any route or hook runs
  if (a.status === 401 || a.status === 429 || a.status === 400) return undefined;
  return `answered ${a.status} to a request without valid credentials (expected 401): ${a.body.slice(0, 300)}`;
}

const isWrite = (c: FuzzCase) => (c.kind === "http" ? ["POST", "PUT", "PATCH", "DELETE"].includes(c.method) : ["create", "update", "delete"].includes(c.method));

/** What an HTTP answer gets wrong, or undefined. */
function httpProblem(c: HttpCase, a: HttpAnswer): string | undefined {
  if (a.status >= 500) return `answered ${a.status}: ${a.body.slice(0, 300)}`;
  if (a.status < 400 || c.method === "HEAD") return undefined;
  let s: { kind?: string; code?: number; reason?: string; details?: { causes?: Array<{ field?: unknown }> } };
  try {
    s = JSON.parse(a.body);
  } catch {
    return `answered ${a.status} without a JSON body: ${a.body.slice(0, 300)}`;
  }
  if (s.kind !== "Status" || s.code !== a.status) return `answered ${a.status} without a Status: ${a.body.slice(0, 300)}`;
  if (s.reason === "Invalid" && (!s.details?.causes?.length || s.details.causes.some((x) => typeof x.field !== "string" || x.field === ""))) return `an Invalid Status without causes naming fields: ${a.body.slice(0, 300)}`;
  return undefined;
}

const SECRET_FORMS = [SEEDED_SECRET.token, Buffer.from(SEEDED_SECRET.token).toString("base64")];

/** Every object write, as the outbox records it (id of the last row and the count). */
async function writes(db: TestDatabase): Promise<string> {
  const [r] = await db.sql<{ id: string; n: number }[]>`SELECT coalesce(max(id), 0)::text AS id, count(*)::int AS n FROM outbox`;
  return `${r!.id}/${r!.n}`;
}

/** Requests between liveness checks (the prototype guard's interval is 10 ms, so a pause of 30 ms lets it fire). */
const CHECK_EVERY = 25;

/** Runs `requests` generated cases against `target`, one at a time, and reports what came back. */
export async function runFuzz(target: FuzzTarget, o: { requests: number; seed: number; timeoutMs?: number; onProgress?: (done: number) => void }): Promise<FuzzResult> {
  const started = Date.now();
  const r = new Rng(o.seed);
  const authRng = new Rng(o.seed ^ 0x5eed_a17);
  const grpcDriver = new GrpcDriver(target.grpcAddress);
  const statuses: Record<string, number> = {};
  const failures: FuzzFailure[] = [];
  const recent: string[] = [];
  let unsent = 0;
  let rejectedWrites = 0;
  let unauthenticated = 0;
  const timeoutMs = o.timeoutMs ?? 15_000;
  const alive = async () => {
    await new Promise((res) => setTimeout(res, 30));
    return !target.proc.exit;
  };
  try {
    for (let i = 0; i < o.requests; i++) {
      const c = generateCase(r, true);
      const auth = credentials(authRng, target.token);
      const anonymous = auth.name !== "admin";
      const what = describeCase(c, auth);
      recent.push(`#${i} ${what.slice(0, 200)}`);
      if (recent.length > CHECK_EVERY) recent.shift();
      const fail = (problem: string) => failures.push({ index: i, case: what, problem });
      const before = isWrite(c) ? await writes(target.db) : undefined;
      let rejected = false;
      let text = "";
      if (c.kind === "http") {
        let a: HttpAnswer;
        try {
          a = await sendHttp(target.url, auth.authorization === undefined ? c : { ...c, headers: { ...c.headers, authorization: auth.authorization } }, timeoutMs);
        } catch (e) {
          const code = (e as { code?: string }).code;
          // node's client refused to send it, or (HEAD) read the body of the server's 400 to an unparseable request line as garbage
          if (code === "ERR_UNESCAPED_CHARACTERS" || code === "ERR_INVALID_HTTP_TOKEN" || code === "ERR_INVALID_CHAR" || (c.method === "HEAD" && code?.startsWith("HPE_"))) {
            unsent++;
            continue;
          }
          if (target.proc.exit) break;
          // a body over the limit is refused from its Content-Length: the 413 may come, and the connection close, before it is all sent
          if (c.body && c.body.length > MAX_REQUEST_BYTES && (code === "EPIPE" || code === "ECONNRESET")) a = { status: 413, body: "" };
          else {
            fail(`no answer: ${(e as Error).message}`);
            continue;
          }
        }
        statuses[String(a.status)] = (statuses[String(a.status)] ?? 0) + 1;
        const p = a.body === "" && a.status === 413 ? undefined : httpProblem(c, a);
        if (p) fail(p);
        const u = anonymous ? unauthenticatedHttpProblem(c, a) : undefined;
        if (u) fail(u);
        if (anonymous) unauthenticated++;
        rejected = a.status >= 400;
        text = a.body;
      } else {
        const bytes = grpcDriver.encode(c);
        if (!bytes) {
          unsent++; // protobuf-es cannot encode it (e.g. nested too deep for it)
          continue;
        }
        const a = await grpcDriver.call(c.method, bytes, timeoutMs, auth.authorization);
        const name = `grpc:${grpc.status[a.code]}`;
        statuses[name] = (statuses[name] ?? 0) + 1;
        if (GRPC_FAILURES.has(a.code)) fail(`answered ${grpc.status[a.code]}: ${a.text.slice(0, 300)}`);
        // a malformed request may be refused (INVALID_ARGUMENT, NOT_FOUND) before its credentials are read, never served
        if (anonymous && a.code === grpc.status.OK) fail(`served a call without valid credentials: ${a.text.slice(0, 300)}`);
        if (anonymous) unauthenticated++;
        rejected = a.code !== grpc.status.OK;
        text = a.text;
      }
      if (SECRET_FORMS.some((s) => text.includes(s))) fail(`the response carries the Secret's value: ${text.slice(0, 300)}`);
      if (before !== undefined && rejected) {
        rejectedWrites++;
        const after = await writes(target.db);
        if (after !== before) fail(`a rejected write changed the stored objects (outbox ${before} -> ${after})`);
      }
      if (target.proc.exit || ((i + 1) % CHECK_EVERY === 0 && !(await alive()))) break;
      o.onProgress?.(i + 1);
    }
    if (await alive()) {
      const h = await fetch(`${target.url}/healthz`).then((x) => x.status, (e: Error) => e.message);
      if (h !== 200) failures.push({ index: -1, case: "GET /healthz", problem: `the gateway no longer answers /healthz: ${h}` });
    } else {
      failures.push({ index: -1, case: recent.join("\n"), problem: `the gateway exited (${target.proc.exit!.signal ?? target.proc.exit!.code}) after one of these requests; its last output:\n${target.logs.tail(4000)}` });
    }
  } finally {
    grpcDriver.close();
  }
  const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
  return { requests, statuses, unsent, rejectedWrites, unauthenticated, failures, seconds: (Date.now() - started) / 1000 };
}
