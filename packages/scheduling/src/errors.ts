import { FlotillaError, type StatusReason } from "@flotilla/api";

/** How a scheduling failure is classified (Karmada's FitError, UnschedulableError, anything else). */
export type ErrorKind = "FitError" | "Unschedulable" | "SchedulerError";

/**
 * The StatusReason of a scheduling failure, for when one crosses a front (the scheduler itself
 * turns them into the Scheduled condition, and a Simulation answers with them): a binding that
 * does not fit the fleet as it is now (no cluster passes the filters, not enough capacity, a
 * spread constraint the clusters cannot meet) is no server fault but a conflict with the current
 * state, `Conflict` (409, ABORTED, retryable: it may fit once clusters change); a wrapped failure
 * keeps the reason of what it wraps; anything else that went wrong is an `InternalError`.
 */
function reasonOf(kind: ErrorKind, options: { cause?: unknown } | undefined): StatusReason {
  const wraps = options !== undefined && "cause" in options;
  if (wraps && options.cause instanceof FlotillaError) return options.cause.reason;
  return kind !== "SchedulerError" || !wraps ? "Conflict" : "InternalError";
}

/**
 * A scheduling failure; wrapping keeps the kind (and the reason), like Go's `errors.As` through
 * `%w`. A FlotillaError: `reason` as `reasonOf` says unless given (`Invalid` for a placement the
 * scheduler does not support).
 */
export class SchedulingError extends FlotillaError {
  readonly kind: ErrorKind;
  constructor(kind: ErrorKind, message: string, options?: { cause?: unknown; reason?: StatusReason }) {
    super(options?.reason ?? reasonOf(kind, options), message, options && "cause" in options ? { cause: options.cause } : undefined);
    this.name = kind === "SchedulerError" ? "SchedulingError" : kind === "FitError" ? "FitError" : "UnschedulableError";
    this.kind = kind;
  }

  /** An internal failure's Status says nothing of it (as `FlotillaError.from`); the message stays for the Scheduled condition. */
  override toStatus() {
    const status = super.toStatus();
    return this.reason === "InternalError" ? { ...status, message: "Internal error occurred: scheduling failed" } : status;
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

/** No cluster passed the filters (`Conflict`: the binding does not fit the clusters as they are). */
export class FitError extends SchedulingError {
  readonly numAllClusters: number;
  constructor(numAllClusters: number, fitReasons: readonly (readonly string[])[]) {
    super("FitError", fitErrorMessage(numAllClusters, fitReasons));
    this.numAllClusters = numAllClusters;
  }
}

/** Not enough capacity: the binding waits in the unschedulable queue (`Conflict`, as a FitError). */
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
