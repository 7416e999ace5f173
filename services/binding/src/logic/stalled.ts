import { InvalidError, setCondition, storedTemplateErrors, type Condition, type KubeObject } from "@flotilla/api";
import { interpretReplicas, invalidTemplate } from "./replicas.js";

/**
 * A template whose fields the controllers read cannot be read (it was written without the
 * gateway's checks) is a failure no retry fixes. It is recorded where a user looks:
 * - condition `Stalled` (True, reason `InvalidTemplate`, the fields in the message) on the
 *   template, by the resource detector, and on its binding when one exists, by the binding
 *   controller. Karmada has no condition for this (its API server never stores such a
 *   template); `Stalled` is the kstatus convention for "cannot make progress without a change
 *   to the object", which kubectl wait, kstatus and Flux-style tooling read. It is removed once
 *   the template is fixed and reconciled.
 * - a Warning Event with Karmada's reasons: `ApplyPolicyFailed` from the detector on the
 *   template (the binding cannot be built), `SyncWorkFailed` from the binding controller on the
 *   binding and the template (its Works cannot be written).
 */
export const Stalled = "Stalled";
export const InvalidTemplateReason = "InvalidTemplate";
/**
 * An override policy cannot be applied to the binding's template for some cluster (a plaintext
 * operation on a missing path, an image that does not parse, …): that cluster's Work is left
 * as it was, and the binding carries `Stalled` with this reason until a change to the policy,
 * the template or the binding lets every Work render. Events: Warning `ApplyOverridePolicyFailed`
 * on the template, `SyncWorkFailed` on the binding, as upstream.
 */
export const OverridePolicyFailedReason = "ApplyOverridePolicyFailed";
export const EventReasonApplyOverridePolicyFailed = "ApplyOverridePolicyFailed";
export const EventReasonApplyPolicyFailed = "ApplyPolicyFailed";
export const EventReasonSyncWorkFailed = "SyncWorkFailed";

/** Condition and event messages are cut to this many characters (a template may have many bad fields). */
export const MAX_MESSAGE = 1024;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export function cutMessage(m: string): string {
  return m.length <= MAX_MESSAGE ? m : `${m.slice(0, MAX_MESSAGE - 1)}…`;
}

/**
 * The template's problems as one InvalidError naming every field, or undefined when it can be
 * read: the gateway's rules for stored templates, then whatever the replica interpreter finds.
 */
export function templateProblem(t: KubeObject): InvalidError | undefined {
  const errs = storedTemplateErrors(t);
  if (errs.length) return invalidTemplate(t, errs);
  try {
    interpretReplicas(t);
  } catch (e) {
    if (e instanceof InvalidError) return e;
    throw e;
  }
  return undefined;
}

export function stalledCondition(message: string, reason: string = InvalidTemplateReason): Condition {
  return { type: Stalled, status: "True", reason, message: cutMessage(message) };
}

/** A status's conditions as a list (a status stored without the gateway may hold anything there). */
function conditionsOf(status: unknown): Condition[] {
  return isObj(status) && Array.isArray(status.conditions) ? (status.conditions.filter(isObj) as Condition[]) : [];
}

/**
 * The status with `Stalled` set to say `message` (its transition time kept while it stays
 * True), or undefined when it already says so. Fields other than `conditions` are kept.
 */
export function withStalled<S>(status: S, message: string, now: Date, reason: string = InvalidTemplateReason): S | undefined {
  const old = conditionsOf(status);
  const c = stalledCondition(message, reason);
  const cur = old.find((x) => x.type === Stalled);
  if (cur && cur.status === c.status && cur.reason === c.reason && cur.message === c.message && isObj(status) && Array.isArray(status.conditions) && status.conditions.every(isObj)) return undefined;
  return { ...(isObj(status) ? status : {}), conditions: setCondition(old, c, now) } as S;
}

/** The status without the `Stalled` condition this service sets, or undefined when it has none. */
export function withoutStalled<S>(status: S): S | undefined {
  const old = conditionsOf(status);
  if (!old.some(isOurStalled)) return undefined;
  const rest = old.filter((c) => !isOurStalled(c));
  const next: Obj = { ...(status as Obj) };
  if (rest.length) next.conditions = rest;
  else delete next.conditions;
  return next as S;
}

function isOurStalled(c: Condition): boolean {
  return c.type === Stalled && (c.reason === InvalidTemplateReason || c.reason === OverridePolicyFailedReason);
}

/** Whether the status carries the `Stalled` condition this service sets. */
export function hasStalled(status: unknown): boolean {
  return conditionsOf(status).some(isOurStalled);
}
