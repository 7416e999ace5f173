import type { Logger } from "pino";

/**
 * How a reconcile ended: nothing more to do, come back after `ms` (a durable timer), or come back
 * after a doubling wait (`retry`: the count of retries in a row is kept with the durable timer).
 */
export type Result = { kind: "done" } | { kind: "after"; ms: number } | { kind: "retry"; baseMs: number; maxMs: number };

const DONE: Result = Object.freeze({ kind: "done" });

export const done = (): Result => DONE;

/** Come back after `ms`; `after(0)` (or any ms that is not a positive finite number) is `done()`. */
export const after = (ms: number): Result => (Number.isFinite(ms) && ms > 0 ? { kind: "after", ms: Math.ceil(ms) } : DONE);

/**
 * Come back after `baseMs` the first time in a row, twice as long each time after, at most
 * `maxMs`: for a failure the reconciler reports without throwing (the wake-up is acked, the key
 * holds no consumer slot while it waits). The count lives with the key's durable timer, so
 * replicas and a restarted process continue it; `done()` or `after()` ends the run.
 */
export const retry = (baseMs: number, maxMs: number): Result => ({ kind: "retry", baseMs, maxMs });

/**
 * A failure that retrying cannot fix: the runner logs and counts it, does not retry it with
 * backoff, and runs the key again only when a wake-up brings a newer version of its object (or
 * a related one: see `Controller.enqueue`).
 */
export class TerminalError extends Error {
  override readonly name = "TerminalError";
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** Throws `err` as terminal: logged and counted, not retried until the object changes. */
export function terminal(err: unknown): never {
  throw err instanceof TerminalError ? err : new TerminalError(err);
}

export function isTerminal(e: unknown): e is TerminalError {
  return e instanceof Error && e.name === "TerminalError";
}

export interface ReconcileContext {
  /** The controller's logger with `{ controller, key, reconcileId }`. */
  log: Logger;
  reconcileId: string;
  /** Aborted when the reconcile exceeds its timeout or the controller stops. */
  signal: AbortSignal;
  /**
   * Tells the runner which resourceVersion of the key's own object this reconcile read (or
   * wrote; the newest counts). A key that fails terminally is then not run again for a wake-up
   * about that version or an older one, and identical failures on one version count toward
   * terminal (see `classifyFailure`). Optional: without it, every wake-up runs the key again.
   */
  observed(resourceVersion: string | undefined): void;
}

/** The input is only the key; re-read the state, reconcile toward it, finish with done() or after(ms). */
export interface Reconciler<K = string> {
  name: string;
  reconcile(key: K, ctx: ReconcileContext): Promise<Result>;
}
