import type { Logger } from "pino";

/** How a reconcile ended: nothing more to do, or come back after `ms` (a durable timer). */
export type Result = { kind: "done" } | { kind: "after"; ms: number };

const DONE: Result = Object.freeze({ kind: "done" });

export const done = (): Result => DONE;

/** Come back after `ms`; `after(0)` (or any ms that is not a positive finite number) is `done()`. */
export const after = (ms: number): Result => (Number.isFinite(ms) && ms > 0 ? { kind: "after", ms: Math.ceil(ms) } : DONE);

/** A failure that retrying cannot fix: the runner logs it and does not retry. */
export class TerminalError extends Error {
  override readonly name = "TerminalError";
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** Throws `err` as terminal: logged, not retried (a later wake-up or resync still reconciles the key). */
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
}

/** The input is only the key; re-read the state, reconcile toward it, finish with done() or after(ms). */
export interface Reconciler<K = string> {
  name: string;
  reconcile(key: K, ctx: ReconcileContext): Promise<Result>;
}
