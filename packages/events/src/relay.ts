import { jetstream, jetstreamManager, type JetStreamClient } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { fetchUnpublished, holdsLock, lockConnection, lockKey, markPublished, pruneOutbox, publishedPrefix, readEpoch, tryLock as tryAdvisoryLock, withTimeout, type Sql } from "@flotilla/store";
import { silentLog, retryDelay, sleep, type Log } from "./log.js";
import { publishRows } from "./outbox.js";
import { ensureStream, type StreamOptions } from "./stream.js";
import { DEFAULT_PREFIX, DEFAULT_STREAM, OUTBOX_CHANNEL } from "./subjects.js";

export interface RelayOptions {
  /** The service's pool; reads and marks the outbox, LISTENs for writes. */
  sql: Sql;
  /** A NATS connection owned by the caller, or ... */
  nc?: NatsConnection;
  /** ... a factory: the relay then owns the connection and reconnects when it is closed. */
  connect?: () => Promise<NatsConnection>;
  stream?: string;
  prefix?: string;
  log?: Log;
  /** Create/update the stream when becoming active (default true), with these settings. */
  ensureStream?: boolean;
  streamOptions?: Omit<StreamOptions, "stream" | "prefix">;
  /** Backstop poll while active (default 250 ms); NOTIFY wakes it sooner. */
  pollMs?: number;
  /** Rows read per batch (default 1000). */
  batchSize?: number;
  /** Messages in flight at once (default 1000). */
  publishWindow?: number;
  /** Wake-ups carried by one message at most (default 256). */
  maxPerMessage?: number;
  publishTimeoutMs?: number;
  /** How often a standby tries to take over (default 1 s). */
  standbyRetryMs?: number;
  /** How often the active relay verifies it still holds the lock (default 1 s). */
  lockCheckMs?: number;
  /**
   * Outbox queries taking longer are abandoned and retried (default 10 s): after a network
   * cut a query can wait for TCP to give up, and a connection the driver left unable to send
   * (see @flotilla/store driver.ts) waits for its connect timeout.
   */
  dbTimeoutMs?: number;
  /** Backoff after transient errors (default 100 ms .. 5 s). */
  backoff?: { baseMs: number; maxMs: number };
  /** Published rows older than this are pruned (default 15 min); 0 disables pruning. */
  retentionMs?: number;
  /** Newest rows kept regardless of age (default 0). */
  keepMin?: number;
  /** How often the active relay prunes (default 30 s). */
  pruneEveryMs?: number;
  /**
   * Other periodic clean-up that one process at a time should do (e.g. the placement history's
   * retention): run by the active relay every `pruneEveryMs`, also when outbox pruning is off.
   */
  housekeeping?: () => Promise<unknown>;
}

export const RELAY_DEFAULTS = {
  pollMs: 250,
  batchSize: 1000,
  publishWindow: 1000,
  maxPerMessage: 256,
  publishTimeoutMs: 5000,
  standbyRetryMs: 1000,
  lockCheckMs: 1000,
  dbTimeoutMs: 10_000,
  backoff: { baseMs: 100, maxMs: 5000 },
  retentionMs: 15 * 60 * 1000,
  keepMin: 0,
  pruneEveryMs: 30_000,
} as const;

export interface RelayStats {
  /** Messages the stream acknowledged (including duplicates). */
  published: number;
  /** Of those, dropped by the stream as already stored (republished after a crash). */
  duplicates: number;
  batches: number;
  errors: number;
  pruned: number;
  /** Times this relay became the active one. */
  activations: number;
}

export interface Relay {
  /** True while this replica holds the relay lock. */
  readonly active: boolean;
  readonly stats: Readonly<RelayStats>;
  /** Resolves once this replica is active (tests, readiness). */
  whenActive(): Promise<void>;
  /** Finishes the current batch, releases the lock, closes owned connections. */
  stop(): Promise<void>;
}

/**
 * Starts the outbox relay. Every replica may start one; a session-level advisory lock makes
 * exactly one active, the others retry every `standbyRetryMs` and take over when it dies.
 */
export function startRelay(opts: RelayOptions): Relay {
  if (!opts.nc === !opts.connect) throw new Error("startRelay: give exactly one of nc or connect");
  const cfg = { ...RELAY_DEFAULTS, ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) } as typeof RELAY_DEFAULTS & RelayOptions;
  const { sql } = opts;
  const log = opts.log ?? silentLog;
  const stream = opts.stream ?? DEFAULT_STREAM;
  const prefix = opts.prefix ?? DEFAULT_PREFIX;
  const k2 = lockKey(stream);
  const stats: RelayStats = { published: 0, duplicates: 0, batches: 0, errors: 0, pruned: 0, activations: 0 };
  const stopper = new AbortController();
  const stopSignal = stopper.signal;

  let active = false;
  let session = 0; // bumped whenever the lock connection closes: the lock is gone with it
  const lockSql = lockConnection(sql, "flotilla-relay-lock", () => {
    session++;
    wake();
  });

  let nc: NatsConnection | undefined = opts.nc;
  let js: JetStreamClient | undefined = nc ? jetstream(nc) : undefined;
  let streamReady = opts.ensureStream === false;

  let wakeUp: (() => void) | undefined;
  let pendingWake = false;
  function wake() {
    pendingWake = true;
    wakeUp?.();
  }
  function waitForWake(ms: number): Promise<void> {
    if (pendingWake || stopSignal.aborted) {
      pendingWake = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        stopSignal.removeEventListener("abort", done);
        wakeUp = undefined;
        pendingWake = false;
        resolve();
      };
      const t = setTimeout(done, ms);
      stopSignal.addEventListener("abort", done, { once: true });
      wakeUp = done;
    });
  }

  let activeWaiters: (() => void)[] = [];

  async function natsClient(): Promise<JetStreamClient> {
    if (nc && !nc.isClosed() && js) return js;
    if (!opts.connect) throw new Error("NATS connection is closed");
    nc = await opts.connect();
    js = jetstream(nc);
    streamReady = opts.ensureStream === false;
    log.info({ server: nc.getServer() }, "relay connected to NATS");
    return js;
  }

  const tryLock = () => tryAdvisoryLock(lockSql, k2, cfg.dbTimeoutMs);
  const lockHeld = () => holdsLock(lockSql, k2, 5000);

  /** One fetch → publish → mark round. Returns the number of rows handled. */
  let probe = false;
  /**
   * This database's epoch, read again on each activation and after each failed round: a
   * database dropped and recreated under a running relay ends its sessions (the lock's
   * included), and the new one has a new epoch. "" (no epoch yet: the migrations still
   * running) is never kept.
   */
  let epoch: string | undefined;
  async function cycle(): Promise<number> {
    const client = await natsClient();
    if (!streamReady) {
      const jsm = await jetstreamManager(nc!, { timeout: cfg.publishTimeoutMs });
      await ensureStream(jsm, { stream, prefix, ...opts.streamOptions });
      streamReady = true;
    }
    epoch ||= await withTimeout(readEpoch(sql), cfg.dbTimeoutMs, "outbox epoch");
    const rows = await withTimeout(fetchUnpublished(sql, cfg.batchSize), cfg.dbTimeoutMs, "outbox read");
    if (rows.length === 0) return 0;
    const res = await publishRows(client, rows, { prefix, stream, window: cfg.publishWindow, maxPerMessage: cfg.maxPerMessage, timeoutMs: cfg.publishTimeoutMs, probe, epoch });
    // Move the cursor past what the stream has, up to the first row it does not; if the move
    // fails the rows are republished and dropped as duplicates.
    await withTimeout(markPublished(sql, publishedPrefix(rows, res.published)), cfg.dbTimeoutMs, "outbox mark");
    stats.published += res.published.length;
    stats.duplicates += res.duplicates;
    stats.batches++;
    if (res.error !== undefined) {
      probe = true;
      throw res.error;
    }
    probe = false;
    return rows.length;
  }

  /**
   * LISTEN only speeds things up (the poll is the backstop), so it never blocks the loop:
   * (re)registration runs in the background. postgres.js re-LISTENs after a reconnect but
   * gives up silently when that fails, so after errors the relay registers again.
   */
  let listening: Promise<{ unlisten: () => Promise<void> }> | undefined;
  let lastListenAt = 0;
  function relisten(): void {
    unlistenAll();
    lastListenAt = Date.now();
    const p = sql.listen(OUTBOX_CHANNEL, wake);
    p.catch((e) => log.warn({ err: e }, "relay LISTEN failed; polling"));
    listening = p;
  }
  function unlistenAll(): void {
    const old = listening;
    listening = undefined;
    old?.then((h) => h.unlisten()).catch(() => {});
  }

  async function runActive(mySession: number): Promise<void> {
    let failures = 0;
    let nextLockCheck = Date.now() + cfg.lockCheckMs;
    let nextPrune = Date.now() + Math.min(cfg.pruneEveryMs, 1000);
    epoch = undefined;
    relisten();
    try {
      while (!stopSignal.aborted && session === mySession) {
        if (Date.now() >= nextLockCheck) {
          if (!(await lockHeld().catch(() => false))) {
            log.warn({ stream }, "relay lost its lock");
            return;
          }
          nextLockCheck = Date.now() + cfg.lockCheckMs;
        }
        let n = 0;
        try {
          n = await cycle();
          if (failures > 0) log.info({ failures }, "relay recovered");
          failures = 0;
        } catch (e) {
          failures++;
          stats.errors++;
          streamReady = opts.ensureStream === false; // the stream may be what went missing
          epoch = undefined; // and the database may be a new one
          if (Date.now() - lastListenAt > 5000) relisten();
          const ms = retryDelay(failures, cfg.backoff.baseMs, cfg.backoff.maxMs);
          log.warn({ err: e, failures, retryInMs: ms }, "relay batch failed; retrying");
          await sleep(ms, stopSignal);
          continue;
        }
        if (n >= cfg.batchSize) continue;
        if ((cfg.retentionMs > 0 || opts.housekeeping) && Date.now() >= nextPrune) {
          nextPrune = Date.now() + cfg.pruneEveryMs;
          if (cfg.retentionMs > 0) {
            try {
              const deleted = await withTimeout(
                pruneOutbox(sql, { retentionMs: cfg.retentionMs, keepMin: cfg.keepMin }),
                Math.max(cfg.dbTimeoutMs, 60_000),
                "outbox prune",
              );
              stats.pruned += deleted;
              if (deleted > 0) log.debug({ deleted }, "relay pruned outbox");
            } catch (e) {
              log.warn({ err: e }, "relay prune failed");
            }
          }
          if (opts.housekeeping) {
            try {
              await withTimeout(opts.housekeeping(), Math.max(cfg.dbTimeoutMs, 60_000), "housekeeping");
            } catch (e) {
              log.warn({ err: e }, "relay housekeeping failed");
            }
          }
        }
        await waitForWake(cfg.pollMs);
      }
    } finally {
      unlistenAll();
    }
  }

  async function loop(): Promise<void> {
    let failures = 0;
    let standbyLogged = false;
    while (!stopSignal.aborted) {
      try {
        const mySession = session;
        if (!(await tryLock())) {
          if (!standbyLogged) log.info({ stream }, "relay standing by");
          standbyLogged = true;
          failures = 0;
          await sleep(cfg.standbyRetryMs, stopSignal);
          continue;
        }
        if (session !== mySession) continue; // the connection dropped under us: the lock went with it
        standbyLogged = false;
        failures = 0;
        active = true;
        stats.activations++;
        log.info({ stream }, "relay active");
        for (const w of activeWaiters) w();
        activeWaiters = [];
        try {
          await runActive(mySession);
        } finally {
          active = false;
          if (session === mySession) await lockSql`SELECT pg_advisory_unlock_all()`.catch(() => {});
        }
      } catch (e) {
        failures++;
        const ms = retryDelay(failures, cfg.backoff.baseMs, cfg.backoff.maxMs);
        log.warn({ err: e, failures, retryInMs: ms }, "relay cannot take the lock; retrying");
        await sleep(ms, stopSignal);
      }
    }
  }

  const running = loop().catch((e) => log.error({ err: e }, "relay loop crashed"));
  let stopping: Promise<void> | undefined;

  return {
    get active() {
      return active;
    },
    stats,
    whenActive() {
      return active ? Promise.resolve() : new Promise<void>((r) => activeWaiters.push(r));
    },
    stop() {
      stopping ??= (async () => {
        stopper.abort();
        wake();
        await running;
        await lockSql.end({ timeout: 1 }).catch(() => {});
        if (opts.connect && nc && !nc.isClosed()) await nc.close().catch(() => {});
        log.info({ stream }, "relay stopped");
      })();
      return stopping;
    },
  };
}
