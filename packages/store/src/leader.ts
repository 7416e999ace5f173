import type { Sql } from "./db.js";
import { sibling } from "./driver.js";

/**
 * Leader election on a Postgres session-level advisory lock, for work that must have exactly one
 * active replica (Karmada's `--leader-elect`: the scheduler, whose capacity bookkeeping is only
 * exact in one process). Every replica runs an election; the one holding the lock leads, the
 * others retry every `retryMs` and take over when the leader's session ends (its process died,
 * its connection dropped, or it stepped down).
 *
 * The lock lives on a dedicated one-connection client. The leader steps down at once when that
 * connection closes, and checks every `checkMs` that its session still holds the lock (a check
 * that cannot reach the database within `timeoutMs` counts as lost). The server drops a vanished
 * client's session through TCP keepalives set on that session (about 11 s), so a dead host does
 * not hold the lock for the kernel's two-hour default; a cut-off leader has stepped down by then
 * (checkMs + timeoutMs = 6 s by default). A new leader waits `checkMs` after taking the lock
 * before it starts, so a leader whose connection was closed under it has stopped first. Only a
 * process frozen longer than that (SIGSTOP, a swap storm) can overlap a successor's term.
 */
export interface LeaderElectionOptions {
  /** The service's pool: its connection settings are reused for the lock's own connection. */
  sql: Sql;
  /** What is being led; one leader per name and database. */
  name: string;
  /** Called when this replica becomes the leader; leadership counts once it resolves. */
  onStartedLeading: () => Promise<void> | void;
  /** Called when leadership ends (lost, or stop()); the next term starts only after it resolves. */
  onStoppedLeading: () => Promise<void> | void;
  log?: { info(o: object, m: string): void; warn(o: object, m: string): void };
  /** How often a standby tries to take the lock (default 1 s). */
  retryMs?: number;
  /** How often the leader verifies it still holds the lock (default 1 s). */
  checkMs?: number;
  /** A lock query taking longer is abandoned (default 5 s). */
  timeoutMs?: number;
}

export interface LeaderElection {
  readonly leading: boolean;
  /** Terms this replica has led. */
  readonly terms: number;
  /** Resolves once this replica leads. */
  whenLeading(): Promise<void>;
  /** Ends the term (if leading), releases the lock and closes its connection. */
  stop(): Promise<void>;
}

/** Advisory lock class shared by Flotilla's elections ("FLOT"); the name picks the key. */
export const LOCK_CLASS = 0x464c4f54;

/** FNV-1a of the name, as a signed 32-bit key. */
export function lockKey(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h | 0;
}

/**
 * A one-connection client on the same database as `sql`, for a session-level advisory lock. The
 * server ends the session (and frees the lock) about 11 s after the client's host vanishes.
 */
export function lockConnection(sql: Sql, applicationName: string, onclose: () => void): Sql {
  return sibling(sql, {
    max: 1,
    idleTimeoutS: 0,
    maxLifetimeS: null,
    connectTimeoutS: 5,
    fetchTypes: false,
    onclose,
    applicationName: applicationName.slice(0, 63),
    settings: { tcp_keepalives_idle: 5, tcp_keepalives_interval: 2, tcp_keepalives_count: 3 },
  });
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise<never>((_, reject) => {
      t = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]);
}

/** True while the session of `lockSql` holds the advisory lock (LOCK_CLASS, key). */
export async function holdsLock(lockSql: Sql, key: number, timeoutMs: number): Promise<boolean> {
  const [r] = await withTimeout(
    lockSql<{ held: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid()
                     AND classid = ${LOCK_CLASS}::bigint::oid AND objid = ${key >>> 0}::bigint::oid AND objsubid = 2) AS held`,
    timeoutMs,
    "lock check",
  );
  return r!.held;
}

/** Tries the advisory lock (LOCK_CLASS, key) on the session of `lockSql`, without waiting. */
export async function tryLock(lockSql: Sql, key: number, timeoutMs: number): Promise<boolean> {
  const [r] = await withTimeout(lockSql<{ ok: boolean }[]>`SELECT pg_try_advisory_lock(${LOCK_CLASS}, ${key}) AS ok`, timeoutMs, "lock");
  return r!.ok;
}

export function startLeaderElection(o: LeaderElectionOptions): LeaderElection {
  const retryMs = o.retryMs ?? 1000;
  const checkMs = o.checkMs ?? 1000;
  const timeoutMs = o.timeoutMs ?? 5000;
  const key = lockKey(o.name);
  const stopper = new AbortController();
  let leading = false;
  let terms = 0;
  let session = 0; // bumped whenever the lock connection closes: the lock went with it
  let waiters: (() => void)[] = [];
  let nudge: (() => void) | undefined;
  const lockSql = lockConnection(o.sql, `flotilla-leader:${o.name}`, () => {
    session++;
    nudge?.();
  });

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        stopper.signal.removeEventListener("abort", done);
        nudge = undefined;
        resolve();
      };
      const t = setTimeout(done, ms);
      stopper.signal.addEventListener("abort", done, { once: true });
      nudge = done;
    });

  async function lead(mySession: number): Promise<void> {
    // a leader whose session was cut notices within checkMs (its connection closes, or its check
    // fails): waiting that long before starting keeps two terms from overlapping
    await pause(checkMs);
    if (stopper.signal.aborted || session !== mySession || !(await holdsLock(lockSql, key, timeoutMs).catch(() => false))) {
      if (session === mySession) await lockSql`SELECT pg_advisory_unlock(${LOCK_CLASS}, ${key})`.catch(() => {});
      return;
    }
    terms++;
    o.log?.info({ name: o.name, term: terms }, "leading");
    try {
      await o.onStartedLeading();
      leading = true;
      for (const w of waiters) w();
      waiters = [];
      while (!stopper.signal.aborted && session === mySession) {
        await pause(checkMs);
        if (stopper.signal.aborted || session !== mySession) break;
        if (!(await holdsLock(lockSql, key, timeoutMs).catch(() => false))) break;
      }
    } finally {
      if (!stopper.signal.aborted) o.log?.warn({ name: o.name }, "lost leadership; standing by");
      leading = false;
      await Promise.resolve(o.onStoppedLeading()).catch((e) => o.log?.warn({ err: e, name: o.name }, "stepping down failed"));
      if (session === mySession) await lockSql`SELECT pg_advisory_unlock(${LOCK_CLASS}, ${key})`.catch(() => {});
    }
  }

  async function loop(): Promise<void> {
    let standby = false;
    while (!stopper.signal.aborted) {
      const mySession = session;
      let got = false;
      try {
        got = await tryLock(lockSql, key, timeoutMs);
      } catch (e) {
        o.log?.warn({ err: e, name: o.name }, "leader election cannot reach the database; retrying");
      }
      if (got && session === mySession && !stopper.signal.aborted) {
        standby = false;
        try {
          await lead(mySession);
        } catch (e) {
          o.log?.warn({ err: e, name: o.name }, "could not start leading; standing by");
          await pause(retryMs);
        }
        continue;
      }
      if (!got && !standby) o.log?.info({ name: o.name }, "standing by: another replica leads");
      standby = !got;
      await pause(retryMs);
    }
  }

  const running = loop();
  let stopping: Promise<void> | undefined;
  return {
    get leading() {
      return leading;
    },
    get terms() {
      return terms;
    },
    whenLeading() {
      return leading ? Promise.resolve() : new Promise<void>((r) => waiters.push(r));
    },
    stop() {
      stopping ??= (async () => {
        stopper.abort();
        nudge?.();
        await running;
        await lockSql.end({ timeout: 1 }).catch(() => {});
      })();
      return stopping;
    },
  };
}
