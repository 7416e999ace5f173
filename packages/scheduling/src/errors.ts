/** How a scheduling failure is classified (Karmada's FitError, UnschedulableError, anything else). */
export type ErrorKind = "FitError" | "Unschedulable" | "SchedulerError";

/** A scheduling failure; wrapping keeps the kind, like Go's `errors.As` through `%w`. */
export class SchedulingError extends Error {
  readonly kind: ErrorKind;
  constructor(kind: ErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = kind === "SchedulerError" ? "SchedulingError" : kind === "FitError" ? "FitError" : "UnschedulableError";
    this.kind = kind;
  }
}

/** `0/N clusters are available: <"count reason" sorted, joined ", ">.` */
export function fitErrorMessage(numAllClusters: number, fitReasons: readonly (readonly string[])[]): string {
  if (numAllClusters === 0 || fitReasons.length === 0) return `0/${numAllClusters} clusters are available: no cluster exists.`;
  const counts = new Map<string, number>();
  for (const reasons of fitReasons) for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  const items = [...counts].map(([r, n]) => `${n} ${r}`).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `0/${numAllClusters} clusters are available: ${items.join(", ")}.`;
}

/** No cluster passed the filters. */
export class FitError extends SchedulingError {
  readonly numAllClusters: number;
  constructor(numAllClusters: number, fitReasons: readonly (readonly string[])[]) {
    super("FitError", fitErrorMessage(numAllClusters, fitReasons));
    this.numAllClusters = numAllClusters;
  }
}

/** Not enough capacity: the binding waits in the unschedulable queue. */
export class UnschedulableError extends SchedulingError {
  constructor(message: string) {
    super("Unschedulable", message);
  }
}

/** `prefix: message`, keeping the kind of the wrapped error. */
export function wrapError(prefix: string, err: unknown): SchedulingError {
  if (err instanceof SchedulingError) return new SchedulingError(err.kind, `${prefix}: ${err.message}`, { cause: err });
  const message = err instanceof Error ? err.message : String(err);
  return new SchedulingError("SchedulerError", `${prefix}: ${message}`, { cause: err });
}
