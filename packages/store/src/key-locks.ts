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
 */
export interface KeyLocks {
  /** Takes the lock of (controller, key) unless another session holds it; false when it does. */
  tryLock(controller: string, key: string): Promise<boolean>;
  /** Gives the lock back (nothing when the session that took it has ended: the lock went with it). */
  unlock(controller: string, key: string): Promise<void>;
  close(): Promise<void>;
}

export function keyLocks(sql: Sql, o: { applicationName?: string; timeoutMs?: number } = {}): KeyLocks {
  const timeoutMs = o.timeoutMs ?? 5000;
  let session = 0;
  const lockSql = lockConnection(sql, o.applicationName ?? "flotilla-key-locks", () => void session++);
  /** The session each held lock was taken in (a lock is re-entrant within a session: counted). */
  const held = new Map<string, { session: number; count: number }>();
  const id = (controller: string, key: string) => `${controller}\u0000${key}`;
  return {
    async tryLock(controller, key) {
      const k = id(controller, key);
      const at = session;
      const q = lockSql<{ ok: boolean }[]>`SELECT pg_try_advisory_lock(${KEY_LOCK_CLASS}, ${lockKey(k)}) AS ok`;
      let r: { ok: boolean } | undefined;
      try {
        [r] = await withTimeout(q, timeoutMs, "key lock");
      } catch (e) {
        // given up on, but it may still be granted: then it is given back at once
        q.then(([late]) => (late?.ok && session === at ? lockSql`SELECT pg_advisory_unlock(${KEY_LOCK_CLASS}, ${lockKey(k)})` : undefined)).catch(() => {});
        throw e;
      }
      if (!r!.ok) return false;
      const h = held.get(k);
      if (h && h.session === at) h.count++;
      else held.set(k, { session: at, count: 1 });
      return true;
    },
    async unlock(controller, key) {
      const k = id(controller, key);
      const h = held.get(k);
      if (!h) return;
      if (--h.count <= 0) held.delete(k);
      if (h.session !== session) return;
      await withTimeout(lockSql`SELECT pg_advisory_unlock(${KEY_LOCK_CLASS}, ${lockKey(k)})`, timeoutMs, "key unlock");
    },
    async close() {
      held.clear();
      await lockSql.end({ timeout: 1 }).catch(() => {});
    },
  };
}
