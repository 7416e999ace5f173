import postgres from "postgres";

/**
 * Every Postgres client of Flotilla is made here, and every transaction runs through
 * `transaction()` below, because postgres.js 3.4.9 (the latest 3.x) has two faults on its
 * connection-loss path. Both are in `src/connection.js`; this module keeps away from them.
 *
 * 1. A crash (`TypeError: Cannot read properties of null (reading 'write')` in `nextWrite`).
 *    A write under 1 KiB is not sent at once: it is buffered and flushed by a `setImmediate`
 *    (`write` → `nextWrite`). `closed()`, run on the socket's close, sets `socket = null`
 *    and parks the connection until the pool next needs it. The pool itself never hands such
 *    a connection a query, but `sql.begin()` and `sql.reserve()` handles hold the connection
 *    object and call `connection.execute()` on it directly, and `execute()` does not check
 *    whether the connection still has a socket. When the connection dies inside
 *    `sql.begin()`, the failed query rejects, and begin's own error path writes `rollback`
 *    on that dead connection; the immediate fires with `socket === null` and throws from a
 *    timer callback, where no caller can catch it: the process dies. (Upstream:
 *    porsager/postgres#1154, #1208; unfixed in 3.4.9.) So `transaction()` never lets a
 *    transaction whose connection is gone issue another statement (its ROLLBACK included),
 *    and nothing here uses `sql.reserve()`: a dedicated session is a client of its own.
 *
 * 2. A connection that stops working. `closed()` clears the pending flush with
 *    `clearImmediate(nextWriteTimer)` but leaves `nextWriteTimer` set (and the buffered
 *    bytes in place). `write()` only schedules a flush while `nextWriteTimer === null`, so
 *    when a socket closes with a write pending, that connection never flushes a small write
 *    again: after the reconnect its StartupMessage stays in the buffer, the server waits for
 *    it (holding a backend, which also stalls a fast shutdown) and every query sent to that
 *    connection fails after `connect_timeout` (30 s by default), forever. A write of 1 KiB or
 *    more is flushed synchronously and resets both variables, so every client here sends a
 *    StartupMessage of more than 1 KiB (`STARTUP_PADDING`, a custom setting the server
 *    accepts and ignores): a poisoned connection sends its stale bytes with the next
 *    StartupMessage, the server refuses that one attempt, and the next one is clean.
 *
 * A third, smaller hole: after every (re)connect a connection first reads the array types
 * (`fetchArrayTypes`), from a promise nobody awaits; if the session dies during that read,
 * the rejection is unhandled (a crash under Node's default). `openDatabase` reads the types
 * once and then turns `fetch_types` off (the types stay known to the pool).
 *
 * What still escapes is caught by `isDriverFault` in the service's process guard.
 */

export type Sql = postgres.Sql;
/** The pool or a transaction: anything that runs a query. */
export type Queryable = postgres.ISql;
export type TransactionSql = postgres.TransactionSql;

/** A custom (dotted) setting in every StartupMessage, so that it is longer than 1 KiB (see above). */
export const STARTUP_PADDING = { "flotilla.startup_padding": "x".repeat(1100) } as const;

export interface ClientOptions {
  max?: number;
  /** Shown in pg_stat_activity. */
  applicationName?: string;
  /** Seconds to wait for a connection (default 10). */
  connectTimeoutS?: number;
  fetchTypes?: boolean;
  /** Called whenever one of the client's connections closes. */
  onclose?: (connectionId: number) => void;
  /** Close idle connections after this many seconds (default: never). */
  idleTimeoutS?: number;
  /** Recycle connections after this many seconds (default: the driver's 30-60 min). */
  maxLifetimeS?: number | null;
  /** Session settings sent at connect (e.g. tcp_keepalives_idle). */
  settings?: Record<string, string | number>;
}

/**
 * Seconds before a closed connection connects again, by failed attempts in a row (the pool's
 * count): 50 ms doubling to 2 s, with jitter. The driver's own grows to 20 s, which would keep
 * a service down for that long after Postgres is back.
 */
export function reconnectDelayS(failures: number): number {
  return Math.min(0.05 * 2 ** failures, 2) * (0.5 + Math.random() / 2);
}

/** A postgres.js client with the options every Flotilla client shares. */
export function createClient(url: string | Record<string, unknown>, o: ClientOptions = {}): Sql {
  const base = {
    max: o.max ?? 8,
    onnotice: () => {},
    connect_timeout: o.connectTimeoutS ?? 10,
    backoff: reconnectDelayS,
    fetch_types: o.fetchTypes ?? true,
    connection: { application_name: o.applicationName ?? "flotilla", ...o.settings, ...STARTUP_PADDING },
    ...(o.onclose ? { onclose: o.onclose } : {}),
    ...(o.idleTimeoutS !== undefined ? { idle_timeout: o.idleTimeoutS } : {}),
    ...(o.maxLifetimeS !== undefined ? { max_lifetime: o.maxLifetimeS } : {}),
  };
  return typeof url === "string" ? postgres(url, base) : postgres({ ...url, ...base } as postgres.Options<Record<string, postgres.PostgresType>>);
}

/** A client on the same server and database as `sql` (its host, port, user, password, TLS). */
export function sibling(sql: Sql, o: ClientOptions = {}): Sql {
  const x = sql.options as unknown as Record<string, unknown>;
  return createClient({ host: x.host, port: x.port, path: x.path, database: x.database, user: x.user, pass: x.pass, ssl: x.ssl }, o);
}

/** Error codes postgres.js gives a query whose connection went away. */
const LOST_CODES = new Set(["CONNECTION_CLOSED", "CONNECTION_DESTROYED", "CONNECTION_ENDED", "CONNECT_TIMEOUT"]);

/**
 * Whether an error means the session is gone: the driver's own codes, a socket error
 * (ECONNRESET, EPIPE, ETIMEDOUT, ...), class 08 (connection exception), 57P0x (shutdown,
 * crash, cannot connect now) or any FATAL/PANIC from the server, which ends the session.
 */
export function isConnectionLost(e: unknown): boolean {
  if (!e || typeof e !== "object") return false;
  const { code, severity, errno } = e as { code?: unknown; severity?: unknown; errno?: unknown };
  if (typeof code === "string") {
    if (LOST_CODES.has(code) || code.startsWith("08") || /^57P0\d$/.test(code)) return true;
    if (/^E[A-Z]+$/.test(code) && errno !== undefined) return true;
  }
  return severity === "FATAL" || severity === "PANIC";
}

class ConnectionLostError extends Error {
  readonly code = "CONNECTION_CLOSED";
  constructor(cause: unknown) {
    super("the transaction's connection was lost", { cause });
    this.name = "ConnectionLostError";
  }
}

/**
 * `sql.begin(mode, fn)` that never writes on a connection that is gone (fault 1 above).
 *
 * When a statement fails because the connection was lost, the transaction is over on the
 * server already (its session ended, so it rolled back), and `transaction()` rejects with that
 * error at once; the driver's own error path, which would write `rollback` on the dead
 * connection, is never reached (the callback it waits for is left unsettled, and nothing
 * holds on to it). After that, the callback's further queries are refused without touching the
 * connection. `fn` must let a connection error propagate (or rethrow it): one it catches and
 * then continues past would still run the next statement on the dead connection.
 */
export function transaction<T>(sql: Sql, fn: (tx: TransactionSql) => Promise<T>, mode = ""): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let lost: unknown;
    const begun = sql.begin(mode, async (raw) => {
      const tx = new Proxy(raw, {
        apply(target, self, args) {
          if (lost !== undefined) throw new ConnectionLostError(lost);
          return Reflect.apply(target as unknown as (...a: unknown[]) => unknown, self, args);
        },
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver);
          if ((prop === "unsafe" || prop === "file") && typeof v === "function") {
            return (...args: unknown[]) => {
              if (lost !== undefined) throw new ConnectionLostError(lost);
              return (v as (...a: unknown[]) => unknown).apply(target, args);
            };
          }
          return v;
        },
      });
      try {
        return await fn(tx);
      } catch (e) {
        if (lost === undefined && !isConnectionLost(e)) throw e; // the session is alive: the driver rolls back
        lost ??= e;
        reject(e);
        return new Promise<never>(() => {}); // never settles, so begin never writes its rollback
      }
    });
    (begun as Promise<unknown>).then((v) => resolve(v as T), (e: unknown) => {
      lost ??= e;
      reject(e);
    });
  });
}

/**
 * Whether an error that reached the process (uncaught exception, unhandled rejection) comes
 * from inside postgres.js: a connection-loss error, or an exception thrown in the driver's own
 * frames. The service logs such a fault and carries on; the pool reconnects by itself.
 */
export function isDriverFault(e: unknown): boolean {
  if (e instanceof postgres.PostgresError) return true;
  if (!e || typeof e !== "object") return false;
  if (LOST_CODES.has(String((e as { code?: unknown }).code))) return true;
  // a socket error the driver passed to a query carries the query (defined by the driver)
  if (isConnectionLost(e) && Object.prototype.hasOwnProperty.call(e, "query")) return true;
  const stack = e instanceof Error ? (e.stack ?? "") : "";
  const top = stack.split("\n").find((l) => /^\s+at /.test(l)) ?? "";
  return /[\\/]node_modules[\\/]postgres[\\/]/.test(top);
}
