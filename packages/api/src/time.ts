/**
 * Kubernetes timestamps. metav1.Time is RFC 3339 in UTC with whole seconds
 * (`2006-01-02T15:04:05Z`); metav1.MicroTime (a Lease's renewTime, an Event's eventTime) has
 * microseconds.
 */

/** metav1.Time's JSON form of a Date or of milliseconds since the epoch. */
export function rfc3339(t: Date | number): string {
  return (typeof t === "number" ? new Date(t) : t).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** metav1.MicroTime's JSON form (`2006-01-02T15:04:05.000000Z`). */
export function microTime(t: Date | number): string {
  return (typeof t === "number" ? new Date(t) : t).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** Milliseconds since the epoch of an RFC 3339 timestamp, or undefined when absent or unparsable. */
export function parseTime(ts: string | undefined): number | undefined {
  if (!ts) return undefined;
  const t = Date.parse(ts);
  return Number.isFinite(t) ? t : undefined;
}
