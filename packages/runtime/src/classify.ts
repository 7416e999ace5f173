import { FlotillaError } from "@flotilla/api";
import { isTerminal } from "./result.js";

/**
 * How the runner treats a failed reconcile:
 * - `terminal`: a retry cannot help (the reconciler said so with `terminal(err)`);
 * - `suspect`: what bad data or a bug throws (TypeError, RangeError, InvalidError, …): retried
 *   with backoff, and terminal once it has failed the same way `terminalAfterRepeats` times in
 *   a row on the same version of the object;
 * - `transient`: everything else (I/O, conflicts, timeouts, a dependency not there yet): retried
 *   with backoff for as long as it takes.
 */
export type FailureClass = "terminal" | "suspect" | "transient";

/** Error names that mean "the input (or the code) is wrong", not "try again later". */
const SUSPECT_NAMES = new Set(["TypeError", "RangeError", "SyntaxError", "ReferenceError", "URIError", "EvalError"]);

/** Error names that are transient whatever else they carry (besides a FlotillaError that says it is retryable). */
const TRANSIENT_NAMES = new Set([
  "ReconcileTimeoutError",
  "StoppedError",
  "AbortError",
  "TimeoutError",
]);

/**
 * Postgres SQLSTATE classes a retry of the same statement on the same data cannot fix: 22 data
 * exception (a cast of a bad value), 42 syntax error or access rule violation (a bug). Every
 * other class (connection, serialization, resources, operator intervention) is transient.
 */
const PG_DETERMINISTIC_CLASSES = new Set(["22", "42"]);

/** Node's codes for an argument of the wrong type or range: bad data, not a network hiccup. */
const NODE_ARGUMENT_CODE = /^ERR_(INVALID_|OUT_OF_RANGE$|MISSING_ARGS$)/;

const MAX_CAUSES = 8;

/** The error and its `cause` chain, outermost first. */
function chain(e: unknown): unknown[] {
  const out: unknown[] = [];
  let cur: unknown = e;
  while (cur !== undefined && cur !== null && out.length < MAX_CAUSES && !out.includes(cur)) {
    out.push(cur);
    cur = typeof cur === "object" ? (cur as { cause?: unknown }).cause : undefined;
  }
  return out;
}

const nameOf = (e: unknown): string | undefined => (e instanceof Error ? e.name : typeof e === "object" && e && typeof (e as { name?: unknown }).name === "string" ? (e as { name: string }).name : undefined);
const codeOf = (e: unknown): string | undefined => {
  const c = typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof c === "string" && c !== "" ? c : undefined;
};

/**
 * Classifies a reconcile failure (pure). An error anywhere in the cause chain that carries a
 * system or driver code (ECONNREFUSED, CONNECTION_CLOSED, a Postgres connection SQLSTATE, …)
 * makes it transient even when the outer error is a TypeError (`fetch failed` is one).
 */
export function classifyFailure(e: unknown): FailureClass {
  if (isTerminal(e)) return "terminal";
  const errs = chain(e);
  for (const x of errs) {
    // Flotilla's own errors say whether a retry can help (REASONS in @flotilla/api)
    if (x instanceof FlotillaError) {
      if (x.retryable) return "transient";
      continue;
    }
    const name = nameOf(x);
    if (name && TRANSIENT_NAMES.has(name)) return "transient";
    const code = codeOf(x);
    if (code === undefined) continue;
    if (name === "PostgresError" && PG_DETERMINISTIC_CLASSES.has(code.slice(0, 2))) return "suspect";
    if (NODE_ARGUMENT_CODE.test(code)) return "suspect";
    return "transient";
  }
  if (e instanceof FlotillaError) return "suspect";
  const name = nameOf(e);
  return name && SUSPECT_NAMES.has(name) ? "suspect" : "transient";
}

/** What makes two failures "the same": the error's name and message. */
export function failureSignature(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return `thrown: ${String(e)}`;
}

/** The run of identical failures a key is on. */
export interface FailureStreak {
  signature: string;
  /** The version of the object the failures were on (undefined when the reconciler did not say). */
  version?: string;
  repeats: number;
}

/**
 * The streak after one more failure, and whether the failure is terminal: a `terminal` one at
 * once; a `suspect` one once the streak (same signature, same version) reaches
 * `terminalAfterRepeats` (0 = never); a `transient` one never (and it ends the streak).
 */
export function nextStreak(prev: FailureStreak | undefined, f: { cls: FailureClass; signature: string; version?: string }, terminalAfterRepeats: number): { streak?: FailureStreak; terminal: boolean } {
  if (f.cls === "transient") return { streak: undefined, terminal: false };
  const same = prev !== undefined && prev.signature === f.signature && prev.version === f.version;
  const streak: FailureStreak = { signature: f.signature, version: f.version, repeats: same ? prev.repeats + 1 : 1 };
  if (f.cls === "terminal") return { streak, terminal: true };
  return { streak, terminal: terminalAfterRepeats > 0 && streak.repeats >= terminalAfterRepeats };
}

const asRv = (rv: string | undefined): bigint | undefined => (rv !== undefined && /^\d+$/.test(rv) ? BigInt(rv) : undefined);

/** The newer of two resourceVersions (numeric ones compared as numbers; otherwise the later given). */
export function newerVersion(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  const x = asRv(a);
  const y = asRv(b);
  if (x !== undefined && y !== undefined) return y > x ? b : a;
  return b;
}

/**
 * Whether a wake-up about version `rv` of an object brings nothing new to a key that failed
 * terminally on version `failedOn`: both known and `rv` not newer. An unknown version on either
 * side is news (the key is tried again).
 */
export function coveredByFailure(failedOn: string | undefined, rv: string | undefined): boolean {
  const f = asRv(failedOn);
  const v = asRv(rv);
  return f !== undefined && v !== undefined && v <= f;
}
