/**
 * The logging surface this package needs. A pino `Logger` satisfies it; so does `silentLog`.
 */
export interface Log {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = () => {};

/** Drops everything (tests and optional logging). */
export const silentLog: Log = { debug: noop, info: noop, warn: noop, error: noop };

/** Exponential delay for the n-th consecutive failure (n >= 1), capped at maxMs. */
export function retryDelay(failures: number, baseMs: number, maxMs: number): number {
  if (!(failures >= 1)) return 0;
  const exp = Math.min(failures - 1, 52);
  return Math.min(maxMs, baseMs * 2 ** exp);
}

/** Resolves after `ms`, or early when the signal aborts. Never rejects. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
