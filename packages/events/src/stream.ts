import { readFileSync } from "node:fs";
import { connect, credsAuthenticator, nanos, type NatsConnection, type NodeConnectionOptions } from "@nats-io/transport-node";
import {
  DiscardPolicy,
  JetStreamApiCodes,
  RetentionPolicy,
  StorageType,
  jetstreamManager,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from "@nats-io/jetstream";
import { DEFAULT_PREFIX, DEFAULT_STREAM, streamSubject } from "./subjects.js";

export interface StreamOptions {
  /** Stream name (default FLOTILLA_OBJECTS). */
  stream?: string;
  /** Subject prefix (default "flotilla"): the stream takes `<prefix>.obj.>`. */
  prefix?: string;
  /** Messages older than this are dropped (default 24 h). */
  maxAgeMs?: number;
  /** Window in which a repeated message id is dropped as a duplicate (default 10 min). */
  duplicateWindowMs?: number;
  /**
   * Copies of the stream in a NATS cluster (JetStream's num_replicas: 1, 3 or 5; more than 1 needs
   * a clustered server). Unset: a new stream gets 1 and an existing one keeps what it has.
   */
  replicas?: number;
}

export const STREAM_DEFAULTS = {
  maxAgeMs: 24 * 60 * 60 * 1000,
  duplicateWindowMs: 10 * 60 * 1000,
} as const;

function desired(o: StreamOptions): { name: string } & Partial<StreamConfig> {
  const maxAgeMs = o.maxAgeMs ?? STREAM_DEFAULTS.maxAgeMs;
  const dupMs = Math.min(o.duplicateWindowMs ?? STREAM_DEFAULTS.duplicateWindowMs, maxAgeMs);
  return {
    name: o.stream ?? DEFAULT_STREAM,
    subjects: [streamSubject(o.prefix ?? DEFAULT_PREFIX)],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_age: nanos(maxAgeMs),
    duplicate_window: nanos(dupMs),
    ...(o.replicas === undefined ? {} : { num_replicas: o.replicas }),
  };
}

function errCode(e: unknown): number | undefined {
  const c = (e as { code?: unknown })?.code;
  return typeof c === "number" ? c : undefined;
}

/**
 * Creates the wake-up stream, or updates subjects, max age, duplicate window and (when given)
 * the number of replicas of an existing one. Idempotent; replicas may call it concurrently.
 */
export async function ensureStream(target: NatsConnection | JetStreamManager, o: StreamOptions = {}): Promise<StreamInfo> {
  const jsm = "streams" in target ? target : await jetstreamManager(target);
  const want = desired(o);
  for (let attempt = 0; ; attempt++) {
    let info: StreamInfo | undefined;
    try {
      info = await jsm.streams.info(want.name);
    } catch (e) {
      if (errCode(e) !== JetStreamApiCodes.StreamNotFound) throw e;
    }
    if (!info) {
      try {
        return await jsm.streams.add(want);
      } catch (e) {
        // Another replica created it first (10058 "stream name already in use"): look again.
        if (attempt < 3) continue;
        throw e;
      }
    }
    const c = info.config;
    const same =
      c.subjects.length === 1 &&
      c.subjects[0] === want.subjects![0] &&
      c.max_age === want.max_age &&
      c.duplicate_window === want.duplicate_window &&
      c.retention === want.retention &&
      c.discard === want.discard &&
      (want.num_replicas === undefined || c.num_replicas === want.num_replicas);
    if (same) return info;
    const { storage: _storage, retention: _retention, ...mutable } = want;
    return await jsm.streams.update(want.name, { ...c, ...mutable });
  }
}

/** Connects with settings suited to long-running services: reconnect forever, quickly. */
/** How a service proves itself to NATS: user and password, a token, or an NKey/JWT credentials file (`nsc`'s .creds). */
export interface NatsCredentials {
  user?: string;
  password?: string;
  token?: string;
  credsFile?: string;
}

/** The connect options of `c` (none when empty); a credentials file is read now. */
export function natsAuthOptions(c: NatsCredentials): Partial<NodeConnectionOptions> {
  return {
    ...(c.user ? { user: c.user, pass: c.password ?? "" } : {}),
    ...(c.token ? { token: c.token } : {}),
    ...(c.credsFile ? { authenticator: credsAuthenticator(new Uint8Array(readFileSync(c.credsFile))) } : {}),
  };
}

export function connectNats(o: NodeConnectionOptions & { servers: string | string[] }): Promise<NatsConnection> {
  return connect({
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    reconnectJitter: 100,
    pingInterval: 10_000,
    maxPingOut: 3,
    ...o,
  });
}

/**
 * Whether the NATS connection is up, from its status events: false from a disconnect until
 * the reconnect, and once it is closed.
 */
export function natsProbe(nc: NatsConnection): () => boolean {
  let connected = true;
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === "disconnect" || s.type === "reconnecting" || s.type === "staleConnection") connected = false;
      else if (s.type === "reconnect") connected = true;
    }
  })().catch(() => {});
  return () => connected && !nc.isClosed();
}
