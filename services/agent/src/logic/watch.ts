/** What a watch of the Works does next after its stream ended. */
export type WatchNext = { action: "watch"; resourceVersion: string; delayMs: number } | { action: "relist"; delayMs: number };

export interface WatchEnd {
  /** The last resourceVersion the stream delivered (or the list's). */
  resourceVersion: string;
  /** HTTP status of the watch request, or the code of an ERROR event (410 Gone: the version is too old). */
  code?: number;
  /** The request failed without an answer (gateway down, connection cut). */
  unreachable?: boolean;
  /** Consecutive failures so far, for the backoff. */
  failures: number;
}

/**
 * client-go's reflector: a watch that ended normally (timeout, the gateway closing it) resumes at
 * once from the last resourceVersion; one that failed resumes after a backoff; 410 Gone (the
 * version was compacted away) lists afresh; without a version there is nothing to resume from.
 */
export function afterWatch(e: WatchEnd, o: { baseMs: number; maxMs: number }): WatchNext {
  const delayMs = e.failures === 0 ? 0 : Math.min(o.maxMs, o.baseMs * 2 ** Math.min(e.failures - 1, 16));
  if (e.code === 410 || !e.resourceVersion) return { action: "relist", delayMs };
  if (e.code !== undefined && e.code >= 400 && e.code !== 429 && e.code < 500) return { action: "relist", delayMs: Math.max(delayMs, o.baseMs) };
  return { action: "watch", resourceVersion: e.resourceVersion, delayMs };
}
