export interface BackoffOptions {
  /** Delay after the first failure. */
  baseMs: number;
  /** Upper bound. */
  maxMs: number;
}

/** controller-runtime's per-item exponential failure limiter (5 ms .. 1000 s), also Karmada's default. */
export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 5, maxMs: 1000 * 1000 };

/**
 * Delay before retrying a key after its n-th consecutive failure: baseMs * 2^(n-1), capped
 * at maxMs. No failures, no delay.
 */
export function backoffDelay(failures: number, o: BackoffOptions = DEFAULT_BACKOFF): number {
  if (!(failures >= 1)) return 0;
  const base = Math.max(0, o.baseMs);
  const max = Math.max(base, o.maxMs);
  // 2^53 overflows nothing we care about; stop doubling long before that.
  const exp = Math.min(Math.floor(failures) - 1, 60);
  return Math.min(max, base * 2 ** exp);
}
