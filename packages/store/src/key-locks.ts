import { lockConnection, lockKey, withTimeout } from "./leader.js";
import type { Sql } from "./driver.js";

/** Advisory lock class of the controllers' keys ("FKEY"); leader elections and the relay use LOCK_CLASS ("FLOT"). */
export const KEY_LOCK_CLASS = 0x464b4559;

/**
 * One key of one controller reconciled by one replica at a time. Replicas of a service share a
 * durable consumer: each wake-up goes to one of them, but two wake-ups of one key (two writes in
 * a row) can go to two, and each replica resyncs and fires timers too. A controller given
 * `keyLocks` runs a reconcile only while its process holds a session-level advisory lock on
 * (controller, key) in Postgres; a key held by another replica is tried again shortly (its
 * wake-up stays unacked meanwhile), so it is reconciled once more after the other replica's run.
 *
 * The locks live on one connection of their own: a replica that dies loses them with its
 * session at once. Should that connection drop while the replica runs, its locks are gone while
 * its reconciles finish; the writes' resourceVersion checks still keep such an overlap from
 * losing an update, as they did before these locks.
 *
 * What it costs: the tries and give-backs of one moment share one statement (one round trip,
 * one transaction), and a lock given back is kept `lingerMs` first: a key reconciled again
 * meanwhile by the same process (the wake-up of its own write comes back within milliseconds)
 * takes it again without a statement. Another replica waits that much longer for such a key
 * (it tries again every `busyRetryMs` of the controller). At most `maxLingering` locks linger
 * (Postgres keeps every advisory lock in its shared lock table); past that the oldest go at once.
 */
export interface KeyLocks {
  /** Takes the lock of (controller, key) unless another session holds it; false when it does. */
  tryLock(controller: string, key: string): Promise<boolean>;
  /** Gives the lock back; resolves once it is given back, or taken again (nothing when its session has ended: the lock went with it). */
  unlock(controller: string, key: string): Promise<void>;
  /** Statements sent so far (each one transaction). */
  readonly statements: number;
  close(): Promise<void>;
}

export interface KeyLockOptions {
  applicationName?: string;
  /** How long one statement may take (default 5 s). */
  timeoutMs?: number;
  /** How long a lock given back is kept for the same process (default 50 ms; 0: given back at once, still batched). */
  lingerMs?: number;
  /** The most locks kept lingering (default 256). */
  maxLingering?: number;
}

interface Held {
  session: number;
  /** Runs holding it (re-entrant within a session). */
  count: number;
  lock: number;
  /** Since when it is held by no run (performance.now()), and who waits for it to be given back. */
  idleSince?: number;
  released?: () => void;
}

interface Try {
  id: string;
  lock: number;
  resolve: (ok: boolean) => void;
  reject: (e: unknown) => void;
}

/** Locks whose linger ends this close to a give-back go with it (rather than in a statement of their own a moment later). */
const LINGER_SLACK_MS = 5;

/** An int4[] literal (an empty JS array would be sent as an empty string). */
const intArray = (xs: readonly number[]) => `{${xs.join(",")}}`;

export function keyLocks(sql: Sql, o: KeyLockOptions = {}): KeyLocks {
  const timeoutMs = o.timeoutMs ?? 5000;
  const lingerMs = o.lingerMs ?? 50;
  const maxLingering = o.maxLingering ?? 256;
  let session = 0;
  let statements = 0;
  let closed = false;
  const lockSql = lockConnection(sql, o.applicationName ?? "flotilla-key-locks", () => void session++);
  const held = new Map<string, Held>();
  /** Held by no run, oldest first (Map keeps insertion order). */
  const lingering = new Map<string, Held>();
  /** Tries not sent yet, and tries sent whose answer has not come (a second try of one of these waits for it). */
  let queued: Try[] = [];
  const pending = new Map<string, Promise<boolean>>();
  const id = (controller: string, key: string) => `${controller}\u0000${key}`;

  let scheduled = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (scheduled || closed) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      void flush();
    });
  };
  const wakeAt = (ms: number) => {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      schedule();
    }, Math.max(0, ms));
  };
  const settle = (h: Held) => {
    h.released?.();
    h.released = undefined;
  };

  /** One statement: gives back what lingered long enough (or too many), then tries what is queued. */
  async function flush(): Promise<void> {
    const now = performance.now();
    const give: [string, Held][] = [];
    const over = lingering.size - maxLingering;
    for (const [k, h] of lingering) {
      if (h.session !== session) {
        // its session ended: the lock went with it
        lingering.delete(k);
        held.delete(k);
        settle(h);
      } else if (give.length < over || now - h.idleSince! >= lingerMs - LINGER_SLACK_MS) give.push([k, h]);
    }
    const tries = queued;
    queued = [];
    for (const [k] of give) {
      lingering.delete(k);
      held.delete(k);
    }
    if (lingering.size > 0) wakeAt(Math.min(...[...lingering.values()].map((h) => h.idleSince! + lingerMs - now)));
    if (give.length === 0 && tries.length === 0) return;
    const at = session;
    statements++;
    // (the lock connection reads no array types: the answers come back as one string of t and f)
    const q = lockSql<{ released: string; ok: string | null }[]>`
      SELECT (SELECT count(*) FROM (SELECT pg_advisory_unlock(${KEY_LOCK_CLASS}, u) FROM unnest(${intArray(give.map(([, h]) => h.lock))}::int4[]) AS u) x)::text AS released,
             (SELECT string_agg(CASE WHEN pg_try_advisory_lock(${KEY_LOCK_CLASS}, l) THEN 't' ELSE 'f' END, '' ORDER BY i)
                FROM unnest(${intArray(tries.map((t) => t.lock))}::int4[]) WITH ORDINALITY AS t(l, i)) AS ok`;
    let ok: string;
    try {
      ok = (await withTimeout(q, timeoutMs, "key lock"))[0]?.ok ?? "";
    } catch (e) {
      // given up on: what it took is given back once it answers; what it gave back is given back again (a lock not held is a no-op)
      q.then(([late]) => {
        const taken = tries.filter((_, i) => late?.ok?.[i] === "t").map((t) => t.lock);
        if (session === at && taken.length > 0) return lockSql`SELECT pg_advisory_unlock(${KEY_LOCK_CLASS}, u) FROM unnest(${intArray(taken)}::int4[]) AS u`;
      }).catch(() => {});
      for (const [k, h] of give) {
        if (session !== at || held.has(k)) settle(h);
        else {
          held.set(k, h);
          lingering.set(k, h);
        }
      }
      if (give.some(([k]) => lingering.has(k))) wakeAt(lingerMs);
      for (const t of tries) t.reject(e);
      return;
    }
    for (const [, h] of give) settle(h);
    tries.forEach((t, i) => {
      const got = ok[i] === "t" && session === at;
      if (got) held.set(t.id, { session: at, count: 1, lock: t.lock });
      t.resolve(got);
    });
  }

  return {
    get statements() {
      return statements;
    },
    async tryLock(controller, key) {
      const k = id(controller, key);
      const h = held.get(k);
      if (h && h.session === session) {
        h.count++;
        if (h.idleSince !== undefined) {
          // taken again while it lingered: no statement
          h.idleSince = undefined;
          lingering.delete(k);
          settle(h);
        }
        return true;
      }
      const inflight = pending.get(k);
      if (inflight) {
        if (!(await inflight)) return false;
        const again = held.get(k);
        if (!again) return false;
        again.count++;
        return true;
      }
      const p = new Promise<boolean>((resolve, reject) => queued.push({ id: k, lock: lockKey(k), resolve, reject }));
      pending.set(k, p);
      schedule();
      try {
        return await p;
      } finally {
        pending.delete(k);
      }
    },
    async unlock(controller, key) {
      const k = id(controller, key);
      const h = held.get(k);
      if (!h || h.idleSince !== undefined) return;
      if (--h.count > 0) return;
      if (h.session !== session) {
        held.delete(k);
        return;
      }
      h.idleSince = performance.now();
      lingering.set(k, h);
      const given = new Promise<void>((resolve) => (h.released = resolve));
      if (lingerMs === 0 || lingering.size > maxLingering) schedule();
      else wakeAt(lingerMs);
      return given;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      for (const h of held.values()) settle(h);
      held.clear();
      lingering.clear();
      for (const t of queued) t.resolve(false);
      queued = [];
      await lockSql.end({ timeout: 1 }).catch(() => {});
    },
  };
}
