import { ConflictError, NotFoundError, type KubeObject } from "@flotilla/api";
import { refOf, startLeaderElection, type LeaderElectionOptions, type ObjectStore, type Sql } from "@flotilla/store";
import { sleep } from "@flotilla/events";
import type { Logger } from "@flotilla/log";
import { EVENT_GKS, collectEveryMs, expired } from "./logic/event-ttl.js";

/** The leader election's name: one collector per database, whichever gateway replica runs it. */
export const EVENT_TTL_ELECTION = "event-ttl";

export interface CollectResult {
  /** Events looked at. */
  scanned: number;
  deleted: number;
  /** Expired, but changed (seen again) or deleted by someone else since they were read. */
  skipped: number;
}

export interface CollectOptions {
  ttlMs: number;
  /** Events read, and deleted, at a time (default 500). */
  batch?: number;
  now?: () => number;
  /** Checked between batches: a pass stops early when it is aborted. */
  signal?: AbortSignal;
}

/**
 * One pass: every Event (core/v1 and events.k8s.io) last seen `ttlMs` or longer ago is deleted
 * through the store, so each deletion is an ordinary one (an outbox row, a DELETED watch event).
 * The Events are read in keyset batches and deleted a batch at a time; each delete carries the
 * resourceVersion read, so an Event counted up in between (seen again) is kept, and the store
 * writes a batch as short transactions of at most 100 rows (its write batcher), holding each
 * Event's lock only for its own statement.
 */
export async function collectExpiredEvents(store: ObjectStore, o: CollectOptions): Promise<CollectResult> {
  const batch = Math.max(1, o.batch ?? 500);
  const now = o.now ?? Date.now;
  const out: CollectResult = { scanned: 0, deleted: 0, skipped: 0 };
  let doomed: KubeObject[] = [];
  const flush = async () => {
    const settled = await Promise.allSettled(
      doomed.map((ev) => store.delete(refOf(ev), { resourceVersion: ev.metadata.resourceVersion, uid: ev.metadata.uid })),
    );
    doomed = [];
    let failure: unknown;
    for (const s of settled) {
      if (s.status === "fulfilled") out.deleted++;
      else if (s.reason instanceof ConflictError || s.reason instanceof NotFoundError) out.skipped++;
      else failure ??= s.reason;
    }
    if (failure !== undefined) throw failure;
  };
  for (const gk of EVENT_GKS) {
    const list = await store.listStream(gk, { batch });
    for await (const ev of list) {
      if (o.signal?.aborted) return out;
      out.scanned++;
      // one with finalizers was marked already: its finalizers' owners take it from there
      if (ev.metadata.deletionTimestamp || !expired(ev, now(), o.ttlMs)) continue;
      doomed.push(ev);
      if (doomed.length >= batch) await flush();
    }
    if (doomed.length > 0) await flush();
  }
  return out;
}

export interface EventCollectorOptions {
  store: ObjectStore;
  /** The pool the leader election holds its lock on. */
  sql: Sql;
  /** Events last seen this long ago are deleted (Kubernetes: 1 h). */
  ttlMs: number;
  log: Logger;
  /** Time between passes (default collectEveryMs(ttlMs): a tenth of the TTL, 1 s .. 1 min). */
  everyMs?: number;
  batch?: number;
  now?: () => number;
  /** Called after each pass that deleted something (metrics). */
  onDeleted?: (n: number) => void;
  /** The election's timing (tests shrink it). */
  election?: Pick<LeaderElectionOptions, "retryMs" | "checkMs" | "timeoutMs">;
}

export interface EventCollector {
  /** True while this replica is the one collecting. */
  readonly leading: boolean;
  readonly stats: Readonly<{ passes: number; deleted: number; errors: number }>;
  /** Resolves once this replica collects (tests). */
  whenLeading(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Runs the Event TTL on one replica at a time: every replica starts one, a leader election
 * (`@flotilla/store` leader.ts) picks the replica that collects, every `everyMs`; another takes
 * over within seconds when it stops or dies. A pass that fails is logged and tried again at the
 * next interval.
 */
export function startEventCollector(o: EventCollectorOptions): EventCollector {
  const log = o.log.child({ component: "event-ttl" });
  const everyMs = o.everyMs ?? collectEveryMs(o.ttlMs);
  const stats = { passes: 0, deleted: 0, errors: 0 };
  let term: { stopper: AbortController; running: Promise<void> } | undefined;

  async function run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const t0 = Date.now();
      try {
        const r = await collectExpiredEvents(o.store, { ttlMs: o.ttlMs, batch: o.batch, now: o.now, signal });
        stats.passes++;
        stats.deleted += r.deleted;
        if (r.deleted > 0) {
          o.onDeleted?.(r.deleted);
          log.info({ deleted: r.deleted, skipped: r.skipped, scanned: r.scanned, tookMs: Date.now() - t0 }, "expired events deleted");
        }
      } catch (e) {
        stats.errors++;
        log.warn({ err: e, retryInMs: everyMs }, "event collection failed; retrying");
      }
      await sleep(everyMs, signal);
    }
  }

  const election = startLeaderElection({
    sql: o.sql,
    name: EVENT_TTL_ELECTION,
    log,
    ...o.election,
    onStartedLeading: () => {
      const stopper = new AbortController();
      term = { stopper, running: run(stopper.signal) };
      log.info({ ttlMs: o.ttlMs, everyMs }, "collecting expired events");
    },
    onStoppedLeading: async () => {
      const t = term;
      term = undefined;
      t?.stopper.abort();
      await t?.running;
    },
  });

  return {
    get leading() {
      return election.leading;
    },
    stats,
    whenLeading: () => election.whenLeading(),
    stop: () => election.stop(),
  };
}
