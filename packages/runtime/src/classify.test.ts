import { test } from "node:test";
import assert from "node:assert/strict";
import { classifyFailure, coveredByFailure, failureSignature, newerVersion, nextStreak, type FailureClass, type FailureStreak } from "./classify.js";
import { BadRequestError, ConflictError, ForbiddenError, GoneError, InvalidError, NotFoundError, UnavailableError } from "@flotilla/api";
import { TerminalError } from "./result.js";

const named = (name: string, message = "x", extra: Record<string, unknown> = {}) => Object.assign(new Error(message), { name }, extra);
const withCode = (e: Error, code: string) => Object.assign(e, { code });

test("failures are classified as terminal, suspect (bad data or a bug) or transient", () => {
  const cases: [string, unknown, FailureClass][] = [
    ["a TerminalError is terminal", new TerminalError(new Error("cannot fix")), "terminal"],
    ["a TypeError from reading bad data is suspect", new TypeError("q.trim is not a function"), "suspect"],
    ["a RangeError is suspect", new RangeError("Invalid array length"), "suspect"],
    ["a SyntaxError from JSON.parse is suspect", new SyntaxError("Unexpected token"), "suspect"],
    ["an InvalidError is suspect", new InvalidError({ group: "apps", kind: "Deployment", name: "d" }, [{ field: "spec.replicas", reason: "FieldValueInvalid", message: "must be >= 0" }]), "suspect"],
    ["a BadRequestError is suspect", new BadRequestError("bad query"), "suspect"],
    ["a ForbiddenError (not retryable) is suspect", new ForbiddenError("no"), "suspect"],
    ["an InvalidError caused by a connection error is transient", new InvalidError({ group: "apps", kind: "Deployment", name: "d" }, [], { cause: withCode(new Error("connect ECONNREFUSED"), "ECONNREFUSED") }), "transient"],
    ["a GoneError is transient", new GoneError("too old"), "transient"],
    ["a plain Error is transient", new Error("binding is owned by another template"), "transient"],
    ["a ConflictError is transient", new ConflictError({ group: "apps", kind: "Deployment", name: "d" }), "transient"],
    ["an UnavailableError is transient", new UnavailableError("database down"), "transient"],
    ["a NotFoundError is transient", new NotFoundError({ group: "apps", kind: "Deployment", name: "d" }), "transient"],
    ["an error merely named like an API error is not one", named("InvalidError"), "transient"],
    ["a reconcile timeout is transient", named("ReconcileTimeoutError"), "transient"],
    ["an AbortError is transient", named("AbortError"), "transient"],
    ["a system error (ECONNREFUSED) is transient", withCode(new Error("connect ECONNREFUSED 127.0.0.1:5432"), "ECONNREFUSED"), "transient"],
    ["a TypeError caused by a network error (fetch failed) is transient", new TypeError("fetch failed", { cause: withCode(new Error("socket hang up"), "ECONNRESET") }), "transient"],
    ["a postgres.js connection error is transient", withCode(new Error("write CONNECTION_CLOSED"), "CONNECTION_CLOSED"), "transient"],
    ["a Postgres serialization failure is transient", withCode(named("PostgresError", "could not serialize access"), "40001"), "transient"],
    ["a Postgres data exception (a bad cast) is suspect", withCode(named("PostgresError", "invalid input syntax for type bigint"), "22P02"), "suspect"],
    ["a Postgres syntax error is suspect", withCode(named("PostgresError", "syntax error"), "42601"), "suspect"],
    ["node's invalid-argument TypeError is suspect", withCode(new TypeError('The "string" argument must be of type string'), "ERR_INVALID_ARG_TYPE"), "suspect"],
    ["node's stream error is transient", withCode(new Error("Premature close"), "ERR_STREAM_PREMATURE_CLOSE"), "transient"],
    ["a thrown string is transient", "boom", "transient"],
    ["undefined is transient", undefined, "transient"],
    ["an error whose cause points back at itself does not loop", (() => { const e = new TypeError("loop") as Error & { cause?: unknown }; e.cause = e; return e; })(), "suspect"],
  ];
  for (const [name, e, want] of cases) assert.equal(classifyFailure(e), want, name);
});

test("a failure's signature is its name and message", () => {
  assert.equal(failureSignature(new TypeError("q.trim is not a function")), "TypeError: q.trim is not a function");
  assert.equal(failureSignature("boom"), "thrown: boom");
});

test("identical suspect failures on one version become terminal after the set number of repeats", () => {
  const sig = "TypeError: q.trim is not a function";
  type Step = { cls: FailureClass; signature?: string; version?: string };
  const run = (steps: Step[], n = 3) => {
    let streak: FailureStreak | undefined;
    return steps.map((s) => {
      const r = nextStreak(streak, { cls: s.cls, signature: s.signature ?? sig, version: s.version }, n);
      streak = r.streak;
      return r.terminal;
    });
  };
  const cases: [string, Step[], boolean[], number?][] = [
    ["a terminal failure is terminal at once", [{ cls: "terminal" }], [true]],
    ["the third identical suspect failure is terminal", [{ cls: "suspect", version: "7" }, { cls: "suspect", version: "7" }, { cls: "suspect", version: "7" }], [false, false, true]],
    ["without a version, identical messages count", [{ cls: "suspect" }, { cls: "suspect" }, { cls: "suspect" }], [false, false, true]],
    ["a new version of the object starts the count again", [{ cls: "suspect", version: "7" }, { cls: "suspect", version: "7" }, { cls: "suspect", version: "8" }, { cls: "suspect", version: "8" }], [false, false, false, false]],
    ["a different message starts the count again", [{ cls: "suspect" }, { cls: "suspect" }, { cls: "suspect", signature: "TypeError: other" }], [false, false, false]],
    ["a transient failure in between starts the count again", [{ cls: "suspect" }, { cls: "suspect" }, { cls: "transient" }, { cls: "suspect" }, { cls: "suspect" }], [false, false, false, false, false]],
    ["transient failures never become terminal", Array.from({ length: 10 }, () => ({ cls: "transient" as const })), Array.from({ length: 10 }, () => false)],
    ["0 repeats turns the rule off", Array.from({ length: 6 }, () => ({ cls: "suspect" as const })), Array.from({ length: 6 }, () => false), 0],
    ["once terminal, the same failure again is terminal again", [{ cls: "suspect" }, { cls: "suspect" }, { cls: "suspect" }, { cls: "suspect" }], [false, false, true, true]],
  ];
  for (const [name, steps, want, n] of cases) assert.deepEqual(run(steps, n ?? 3), want, name);
});

test("a wake-up brings news to a parked key only with a newer version, or when either version is unknown", () => {
  const cases: [string, string | undefined, string | undefined, boolean][] = [
    ["the version it failed on is no news", "42", "42", true],
    ["an older version is no news", "42", "41", true],
    ["a newer version is news", "42", "43", false],
    ["versions compare as numbers, not strings", "9", "10", false],
    ["a wake-up without a version is news", "42", undefined, false],
    ["a failure without a known version takes any version as news", undefined, "42", false],
    ["a version that is not a number is news", "42", "abc", false],
  ];
  for (const [name, failedOn, rv, want] of cases) assert.equal(coveredByFailure(failedOn, rv), want, name);
  assert.equal(newerVersion("9", "10"), "10");
  assert.equal(newerVersion("10", "9"), "10");
  assert.equal(newerVersion(undefined, "3"), "3");
  assert.equal(newerVersion("3", undefined), "3");
});
