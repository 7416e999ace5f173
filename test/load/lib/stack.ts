// The whole stack as processes, isolated from anything else on the machine: every service from its
// build (services/<name>/dist/main.js) on free ports against a database and JetStream stream of
// its own, optionally the member simulator as a child process, joining the members through the
// gateway and waiting until they are Ready; and the waits the load runners share ("the services
// are idle"). Used by the load runners and the end-to-end harness.
//
// The gateway authenticates every request but its probes: each stack gets a token file of its
// own (adminTokenFile) with one random administrator token (group system:masters), which callers
// send as `Authorization: Bearer` (Services.token, bearer(), gatewayFetch()).
import { ensureServingCert, ensureSigningKey } from "@flotilla/auth";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { Sql } from "postgres";
import { connectNats, jetstreamManager } from "@flotilla/events";
import { NATS_URL, eventually, uniqueName, type TestDatabase } from "@flotilla/testkit";
import { unpublished } from "./counters.js";
import type { ProcessLogs } from "./logs.js";
import { controllersBusy } from "./metrics.js";
import { freePort } from "./proc.js";
import { sleep } from "./stats.js";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** Every service, in start order (as `npm start`). */
export const SERVICE_NAMES = ["gateway", "execution", "binding", "scheduler", "taint-manager", "eviction"] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A child process whose output goes to a log (tail in memory, optionally a file). */
export interface Managed {
  readonly name: string;
  readonly child: ChildProcess;
  /** Set once it has exited. */
  readonly exit: Exit | undefined;
  readonly exited: Promise<Exit>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with how it ended. */
  stop(graceMs?: number): Promise<Exit>;
  /** Sends `signal` (SIGKILL: a crash) at once, as an exit the caller asked for; resolves with how it ended. */
  kill(signal?: NodeJS.Signals): Promise<Exit>;
}

export interface LaunchOptions {
  env?: Record<string, string>;
  /** `node --cpu-prof --cpu-prof-dir <dir>`: the profile is written when the process exits normally. */
  cpuProfDir?: string;
  /** Leave stdout to the caller (it is read for the simulator's JSON line). */
  ownStdout?: boolean;
  /** Node options before the script (e.g. `--conditions=source --import tsx` to run TypeScript sources). */
  nodeArgs?: string[];
}

/** Runs `node <script> ...args` with its output in `logs`; reports an exit nobody asked for. */
export function launch(name: string, script: string, args: string[], logs: ProcessLogs, o: LaunchOptions = {}): Managed {
  const node = o.cpuProfDir ? (mkdirSync(o.cpuProfDir, { recursive: true }), ["--cpu-prof", "--cpu-prof-dir", o.cpuProfDir]) : [];
  const child = spawn(process.execPath, [...(o.nodeArgs ?? []), ...node, script, ...args], { cwd: root, env: { ...process.env, ...o.env }, stdio: ["ignore", "pipe", "pipe"] });
  if (!o.ownStdout) logs.attach(name, child.stdout);
  logs.attach(name, child.stderr);
  let stopping = false;
  let exit: Exit | undefined;
  const exited = new Promise<Exit>((resolve) =>
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      if (!stopping) console.error(`${name} exited on its own (${signal ?? code}); its last output:\n${logs.tail(8000)}`);
      resolve(exit);
    }),
  );
  return {
    name,
    child,
    get exit() {
      return exit;
    },
    exited,
    async stop(graceMs = 20_000) {
      stopping = true;
      if (exit) return exit;
      child.kill("SIGTERM");
      const kill = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const e = await exited;
      clearTimeout(kill);
      return e;
    },
    async kill(signal = "SIGKILL") {
      stopping = true;
      if (exit) return exit;
      child.kill(signal);
      return exited;
    },
  };
}

export interface IsolatedEnv {
  DATABASE_URL: string;
  NATS_URL: string;
  EVENTS_STREAM: string;
  EVENTS_PREFIX: string;
  HOST: string;
}

/** The settings every service of one isolated stack shares: its database, its stream and prefix. */
export function isolatedEnv(db: TestDatabase, label = "load"): IsolatedEnv {
  return {
    DATABASE_URL: db.url,
    NATS_URL,
    EVENTS_STREAM: uniqueName(label).toUpperCase(),
    EVENTS_PREFIX: uniqueName(label.toLowerCase()),
    HOST: "127.0.0.1",
  };
}

export interface AdminTokenFile {
  /** The token file (kube-apiserver's --token-auth-file format), for the gateway's TOKEN_AUTH_FILE. */
  file: string;
  /** The administrator's bearer token (user admin, group system:masters). */
  token: string;
  /** Removes the file and its directory. */
  remove(): void;
}

/** A token file with one random administrator token, in a temporary directory of its own (mode 0600). */
export function adminTokenFile(): AdminTokenFile {
  const dir = mkdtempSync(path.join(os.tmpdir(), "flotilla-tokens-"));
  const file = path.join(dir, "tokens.csv");
  const token = randomBytes(32).toString("base64url");
  writeFileSync(file, `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });
  return { file, token, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The `Authorization` header that carries `token`. */
export const bearer = (token: string): { authorization: string } => ({ authorization: `Bearer ${token}` });

/** The gateway's address and the administrator's token for it. */
export interface GatewayAccess {
  gatewayUrl: string;
  token: string;
}

/** `fetch(gatewayUrl + path)` as the administrator; `init.headers` (a plain object) are added. */
export function gatewayFetch(gw: GatewayAccess, p: string, init: Omit<RequestInit, "headers"> & { headers?: Record<string, string> } = {}): Promise<Response> {
  return fetch(`${gw.gatewayUrl}${p}`, { ...init, headers: { ...bearer(gw.token), ...init.headers } });
}

export interface Services {
  gatewayUrl: string;
  /** The administrator's bearer token (group system:masters) of this stack's gateway. */
  token: string;
  /** HTTP port (/healthz, /readyz, /metrics) of each service. */
  ports: ReadonlyMap<ServiceName, number>;
  /** host:port of execution's replica estimator (gRPC), which the scheduler asks. */
  estimatorAddress: string;
  /** The internal gRPC servers' certificate (a caller's CA) and the service-account key (callers sign their tokens with it). */
  grpcFiles: { cert: string; serviceAccountKey: string };
  procs: ReadonlyMap<ServiceName, Managed>;
  /**
   * Starts a service again (after it exited or was killed) with the same settings and port; the
   * new process replaces the old one in `procs`. Does not wait for it to be ready.
   */
  relaunch(name: ServiceName): Managed;
  /** The settings `name` was started with (PORT included), for starting more replicas of it. */
  envOf(name: ServiceName): Record<string, string>;
  /** SIGTERM to every service, waiting for each to exit. */
  stop(): Promise<Map<ServiceName, Exit>>;
  /**
   * Every replica of `name`, the first (the one in `procs` and `ports`) first; with
   * `replicas: 1` (the default) just that one.
   */
  replicasOf(name: ServiceName): readonly Replica[];
  /** The gateway replicas' base URLs (`gatewayUrl` first). */
  gatewayUrls: readonly string[];
}

/** One replica process of a service (ServicesOptions.replicas). */
export interface Replica {
  service: ServiceName;
  /** 0 for the first replica (`procs`, `ports`, `relaunch`), 1, 2, … for the others. */
  index: number;
  /** Its name in the logs: the service's name for the first replica, `<service>-<index>` for the others. */
  label: string;
  /** Its HTTP port (/healthz, /readyz, /metrics). */
  port: number;
  /** Its process (the first replica's is replaced by `relaunch`). */
  readonly proc: Managed;
  /** The settings it was started with. */
  env: Record<string, string>;
}

export interface ServicesOptions {
  /** Shared settings: isolatedEnv() plus knobs. */
  env: Record<string, string>;
  logs: ProcessLogs;
  /** Profiles go to `<cpuProfDir>/<service>`. */
  cpuProfDir?: string;
  readyTimeoutMs?: number;
  /**
   * Processes per service (default 1), each on ports of its own: execution's are named
   * `execution-<index>` (REPLICA_NAME) and serve their own estimator, the scheduler replica of
   * index i asks execution replica i's estimator (i modulo their number) and gateway replica i
   * the scheduler replica i's gRPC API. They share the database and stream, as replicas of a
   * Deployment do.
   */
  replicas?: number | Partial<Record<ServiceName, number>>;
  /** Settings of one service only (after `env`), e.g. a log level. */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
}

/**
 * Starts every service from its build on free ports, wired as `npm start` wires them (the
 * scheduler asks execution's estimator), and waits until each answers /readyz.
 */
export async function startServices(o: ServicesOptions): Promise<Services> {
  const ports = new Map<ServiceName, number>();
  for (const s of SERVICE_NAMES) ports.set(s, await freePort());
  const estimatorPort = await freePort();
  const schedulerGrpcPort = await freePort();
  const tokens = adminTokenFile();
  // member credentials sealed at rest, as npm start runs them; one key file per environment (its
  // stream), so that a stack started again on the same database still opens them
  const keys = { ENCRYPTION_KEYS_FILE: path.join(os.tmpdir(), `flotilla-keys-${o.env.EVENTS_STREAM ?? "default"}`, "encryption-keys"), ENCRYPTION_KEYS_FILE_CREATE: "true" };
  const count = (s: ServiceName) => Math.max(1, typeof o.replicas === "number" ? o.replicas : (o.replicas?.[s] ?? 1));
  // the scheduler's and the estimator's gRPC servers speak TLS only and take service account
  // tokens: one certificate and one key for the stack, made before any service reads them
  const stateDir = path.dirname(keys.ENCRYPTION_KEYS_FILE);
  const grpcTls = { TLS_CERT_FILE: path.join(stateDir, "grpc-tls.crt"), TLS_KEY_FILE: path.join(stateDir, "grpc-tls.key") };
  const serviceAccountKey = path.join(stateDir, "service-account.key");
  await ensureServingCert(grpcTls.TLS_CERT_FILE, grpcTls.TLS_KEY_FILE);
  await ensureSigningKey(serviceAccountKey);
  const internalGrpc = { ...grpcTls, SERVICE_ACCOUNT_KEY_FILE: serviceAccountKey };
  const own: Record<ServiceName, Record<string, string>> = {
    // plaintext on 127.0.0.1 (HOST of isolatedEnv), which the gateway allows on a loopback address only
    // the cluster proxy reaches the simulator's plain-http members as execution does
    // and answers simulations through the scheduler's gRPC API
    // and issues service account tokens (TokenRequest), as npm start does
    gateway: { GRPC_PORT: "0", SCHEDULER_GRPC_URL: `127.0.0.1:${schedulerGrpcPort}`, SCHEDULER_CA_FILE: grpcTls.TLS_CERT_FILE, TOKEN_AUTH_FILE: tokens.file, MEMBER_ALLOW_HTTP: "loopback", SERVICE_ACCOUNT_KEY_FILE: serviceAccountKey, ...keys },
    // the simulator serves plain http on 127.0.0.1
    // (several replicas: the first is execution-0, as the others are execution-<index>)
    execution: { ESTIMATOR_PORT: String(estimatorPort), MEMBER_ALLOW_HTTP: "loopback", ...internalGrpc, ...keys, ...(count("execution") > 1 ? { REPLICA_NAME: "execution-0" } : {}) },
    binding: {},
    scheduler: { SCHEDULER_GRPC_PORT: String(schedulerGrpcPort), ESTIMATOR_GRPC_URL: `127.0.0.1:${estimatorPort}`, ESTIMATOR_CA_FILE: grpcTls.TLS_CERT_FILE, ...internalGrpc },
    "taint-manager": {},
    eviction: {},
  };
  const procs = new Map<ServiceName, Managed>();
  const envOf = (s: ServiceName) => ({ ...o.env, PORT: String(ports.get(s)), ...own[s], ...o.serviceEnv?.[s] });
  const launchAs = (s: ServiceName, label: string, env: Record<string, string>) =>
    launch(label, path.join(root, "services", s, "dist", "main.js"), [], o.logs, { env, ...(o.cpuProfDir ? { cpuProfDir: path.join(o.cpuProfDir, label) } : {}) });
  const start = (s: ServiceName) => launchAs(s, s, envOf(s));
  for (const s of SERVICE_NAMES) procs.set(s, start(s));

  // the other replicas: ports of their own, wired to the replica of the same index
  const more: Replica[] = [];
  const estimatorPorts = [estimatorPort];
  const schedulerGrpcPorts = [schedulerGrpcPort];
  for (let i = 1; i < Math.max(count("execution"), count("scheduler")); i++) {
    estimatorPorts.push(await freePort());
    schedulerGrpcPorts.push(await freePort());
  }
  const estimatorOf = (i: number) => `127.0.0.1:${estimatorPorts[i % count("execution")]}`;
  const schedulerOf = (i: number) => `127.0.0.1:${schedulerGrpcPorts[i % count("scheduler")]}`;
  const replicaEnv: Partial<Record<ServiceName, (i: number) => Record<string, string>>> = {
    execution: (i) => ({ ESTIMATOR_PORT: String(estimatorPorts[i]), REPLICA_NAME: `execution-${i}` }),
    scheduler: (i) => ({ SCHEDULER_GRPC_PORT: String(schedulerGrpcPorts[i]), ESTIMATOR_GRPC_URL: estimatorOf(i) }),
    gateway: (i) => ({ SCHEDULER_GRPC_URL: schedulerOf(i) }),
  };
  for (const s of SERVICE_NAMES) {
    for (let i = 1; i < count(s); i++) {
      const port = await freePort();
      const env = { ...envOf(s), PORT: String(port), ...replicaEnv[s]?.(i), ...o.serviceEnv?.[s] };
      const label = `${s}-${i}`;
      more.push({ service: s, index: i, label, port, proc: launchAs(s, label, env), env });
    }
  }
  const relaunch = (s: ServiceName) => {
    const old = procs.get(s);
    if (old && !old.exit) throw new Error(`${s} is still running`);
    const p = start(s);
    procs.set(s, p);
    return p;
  };
  const replicasOf = (s: ServiceName): Replica[] => [
    {
      service: s,
      index: 0,
      label: s,
      port: ports.get(s)!,
      get proc() {
        return procs.get(s)!;
      },
      env: envOf(s),
    },
    ...more.filter((r) => r.service === s),
  ];
  const stop = async () => {
    const exits = new Map(await Promise.all([...procs].map(async ([n, p]) => [n, await p.stop()] as const)));
    await Promise.all(more.map((r) => r.proc.stop()));
    tokens.remove();
    return exits;
  };
  try {
    await waitReady([...procs.values(), ...more.map((r) => r.proc)], [...ports.values(), ...more.map((r) => r.port)], o.readyTimeoutMs);
  } catch (e) {
    await stop();
    throw e;
  }
  const gatewayUrls = replicasOf("gateway").map((r) => `http://127.0.0.1:${r.port}`);
  return { gatewayUrl: gatewayUrls[0]!, gatewayUrls, token: tokens.token, ports, estimatorAddress: `127.0.0.1:${estimatorPort}`, grpcFiles: { cert: grpcTls.TLS_CERT_FILE, serviceAccountKey }, procs, relaunch, envOf, stop, replicasOf };
}

/** One service from its build (`services/<name>/dist/main.js`); `env` holds all its settings (PORT included). */
export function launchService(name: ServiceName, o: { env: Record<string, string>; logs: ProcessLogs; cpuProfDir?: string }): Managed {
  return launch(name, path.join(root, "services", name, "dist", "main.js"), [], o.logs, { env: o.env, ...(o.cpuProfDir ? { cpuProfDir: o.cpuProfDir } : {}) });
}

/** Waits until every port answers /readyz; fails as soon as one of the processes exits. */
export async function waitReady(procs: Iterable<Managed>, ports: Iterable<number>, timeoutMs = 60_000): Promise<void> {
  const [ps, urls] = [[...procs], [...ports].map((p) => `http://127.0.0.1:${p}/readyz`)];
  await eventually(
    async () => {
      const down = ps.find((p) => p.exit);
      if (down) throw new Error(`${down.name} exited (${down.exit!.signal ?? down.exit!.code})`);
      const ok = await Promise.all(urls.map((u) => fetch(u).then((r) => r.ok, () => false)));
      return ok.every(Boolean);
    },
    { timeoutMs, intervalMs: 100, message: "every service ready" },
  );
}

export interface SimMember {
  name: string;
  server: string;
  token: string;
}

export interface SimulatorProcess extends Managed {
  adminUrl: string;
  clusters: SimMember[];
}

export interface SimulatorOptions {
  count: number;
  readyDelayMs: number;
  nodes?: number;
  nodeCpu?: string;
  nodeMemory?: string;
  nodePods?: number;
  logs: ProcessLogs;
  cpuProfDir?: string;
}

/** The member simulator CLI (packages/member-sim/dist/cli.js) with N generated clusters on free ports and a free admin port. */
export async function startSimulatorProcess(o: SimulatorOptions): Promise<SimulatorProcess> {
  const args = ["--count", String(o.count), "--admin-port", "0", "--json", "--ready-delay-ms", String(o.readyDelayMs)];
  if (o.nodes !== undefined) args.push("--nodes", String(o.nodes));
  if (o.nodeCpu !== undefined) args.push("--node-cpu", o.nodeCpu);
  if (o.nodeMemory !== undefined) args.push("--node-memory", o.nodeMemory);
  if (o.nodePods !== undefined) args.push("--node-pods", String(o.nodePods));
  const p = launch("member-sim", path.join(root, "packages/member-sim/dist/cli.js"), args, o.logs, { ownStdout: true, ...(o.cpuProfDir ? { cpuProfDir: o.cpuProfDir } : {}) });
  const lines = createInterface({ input: p.child.stdout!, crlfDelay: Infinity });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    void p.exited.then((e) => reject(new Error(`the simulator exited (${e.signal ?? e.code}) before listing its clusters`)));
  });
  lines.on("line", (l) => o.logs.line(p.name, l));
  const info = JSON.parse(first) as { admin: string; clusters: SimMember[] };
  return Object.assign(p, { adminUrl: info.admin, clusters: info.clusters });
}

export type JoinMembers = (o: { gatewayUrl: string; adminUrl: string; token?: string; log?: (s: string) => void }) => Promise<string[]>;

/** scripts/join-members.mjs's joinMembers (as `npm start` runs it). */
export async function loadJoinMembers(): Promise<JoinMembers> {
  return ((await import(path.join(root, "scripts/join-members.mjs"))) as { joinMembers: JoinMembers }).joinMembers;
}

/**
 * Joins the simulator's members through the gateway (scripts/join-members.mjs, as `npm start`)
 * and waits until all `count` Clusters are Ready, untainted, and have API enablements and a
 * resource summary.
 */
export async function joinAndWaitReady(o: GatewayAccess & { adminUrl: string; sql: Sql; count: number; timeoutMs?: number }): Promise<void> {
  const joinMembers = await loadJoinMembers();
  await joinMembers({ gatewayUrl: o.gatewayUrl, adminUrl: o.adminUrl, token: o.token, log: () => {} });
  let ready = 0;
  await eventually(
    async () => {
      [{ ready }] = await o.sql<{ ready: number }[]>`
        SELECT count(*)::int AS ready FROM objects WHERE gk = 'cluster.karmada.io/Cluster'
          AND body->'status'->'conditions' @> '[{"type":"Ready","status":"True"}]'
          AND coalesce(jsonb_array_length(body->'spec'->'taints'), 0) = 0
          AND coalesce(jsonb_array_length(body->'status'->'apiEnablements'), 0) > 0
          AND body->'status' ? 'resourceSummary'`;
      return ready === o.count;
    },
    { timeoutMs: o.timeoutMs ?? 120_000, intervalMs: 200, message: `${o.count} Ready, untainted clusters with API enablements and a resource summary (have ${ready})` },
  );
}

/**
 * Waits until the stack has worked off what it was given: nothing left in the outbox to publish
 * and every controller's queue empty and nothing in flight, `times` checks in a row `everyMs` apart.
 * `token` is sent to every /metrics (the gateway's needs it; the other services' ignore it).
 */
export async function waitIdle(sql: Sql, ports: Iterable<number>, o: { times?: number; everyMs?: number; timeoutMs?: number; token?: string } = {}): Promise<void> {
  const list = [...ports];
  const deadline = Date.now() + (o.timeoutMs ?? 120_000);
  for (let quiet = 0; quiet < (o.times ?? 3); ) {
    if (Date.now() > deadline) throw new Error("the services did not go idle");
    await sleep(o.everyMs ?? 300);
    const [left, busy] = await Promise.all([unpublished(sql), Promise.all(list.map((p) => controllersBusy(`http://127.0.0.1:${p}/metrics`, o.token ? bearer(o.token) : {})))]);
    quiet = left === 0 && !busy.some(Boolean) ? quiet + 1 : 0;
  }
}

/** Deletes a JetStream stream (the services create it on start); ignores a missing one. */
export async function deleteStream(stream: string): Promise<void> {
  const nc = await connectNats({ servers: NATS_URL });
  try {
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => false);
  } finally {
    await nc.close();
  }
}
