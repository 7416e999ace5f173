import { GK, ClusterPropagationPolicyControllerFinalizer, PropagationPolicyControllerFinalizer, isConflict, isNotFound, parseApiVersion, type AnyPropagationPolicy, type KubeObject, type Requirement, type KeyRef } from "@flotilla/api";
import { refOf, type EventRecorder, type ObjectStore } from "@flotilla/store";
import type { Settings } from "../settings.js";
import type { SeenVersions } from "@flotilla/runtime";
import type { PolicyCache, ReconcileStarts } from "./caches.js";
import type { OverridePolicies } from "./overrides.js";
import { bindingRefFor } from "../logic/binding.js";
import { claimedById, idLabelOf, withoutClaimMeta, type PolicyKind } from "../logic/claim.js";

/** What every controller of this service is built from. */
export interface ControllerDeps {
  store: ObjectStore;
  settings: Settings;
  /** Compiled `skippedNamespaces`. */
  skipped: RegExp[];
  now: () => Date;
  /** Permanent ids for new bindings and Works (a UUID in production). */
  uuid: () => string;
  /**
   * Per controller, the versions it wrote or reconciled, whose wake-ups it skips: the detector
   * (templates), the binding controller (bindings, the Works and template statuses it writes),
   * the dependencies distributor (the bindings it holds with its finalizer).
   */
  seen: { detector: SeenVersions; binding: SeenVersions; dependencies: SeenVersions };
  /** Policy lists for choosing the policy of unclaimed templates. */
  policies: PolicyCache;
  /** When the detector last started on each template. */
  detectorStarts: ReconcileStarts;
  /** Kubernetes Events, per controller (the controller's name is the reporting component). */
  events: { detector: EventRecorder; binding: EventRecorder };
  /** The override policies renders read (see OverridePolicies). */
  overridePolicies: OverridePolicies;
}

export function policyGk(kind: PolicyKind): string {
  return kind === "PropagationPolicy" ? GK.propagationPolicy : GK.clusterPropagationPolicy;
}

export function policyFinalizer(kind: PolicyKind): string {
  return kind === "PropagationPolicy" ? PropagationPolicyControllerFinalizer : ClusterPropagationPolicyControllerFinalizer;
}

/** The store reference of a binding's `spec.resource`. */
export function templateRef(r: { apiVersion?: string; kind?: string; namespace?: string; name?: string }): KeyRef {
  return { gk: `${parseApiVersion(r.apiVersion ?? "").group}/${r.kind ?? ""}`, namespace: r.namespace ?? "", name: r.name ?? "" };
}

/** The store reference of an object. */
export function toRef(o: KubeObject): KeyRef {
  const r = refOf(o);
  return { gk: r.gk, namespace: r.namespace ?? "", name: r.name };
}

export function labelEquals(key: string, value: string): Requirement[] {
  return [{ key, operator: "In", values: [value] }];
}

/** Delete, treating an object that is already gone as deleted; returns the object as of after the call. */
export async function deleteIfPresent(store: ObjectStore, ref: KeyRef): Promise<KubeObject | undefined> {
  try {
    return await store.delete(ref);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    return undefined;
  }
}

/**
 * The policy with the detector's finalizer (and its permanent id, as the admission webhook
 * would have set it), so that deleting it always passes through the policy controller, which
 * strips its claims before letting it go. Throws while the policy is being deleted.
 */
export async function ensurePolicyFinalizer<P extends AnyPropagationPolicy>(d: Pick<ControllerDeps, "store" | "uuid">, policy: P): Promise<P> {
  const kind = policy.kind as PolicyKind;
  const fin = policyFinalizer(kind);
  const idLabel = idLabelOf(kind);
  if (policy.metadata.deletionTimestamp) throw new Error(`${kind} ${policy.metadata.namespace ? policy.metadata.namespace + "/" : ""}${policy.metadata.name} is being deleted`);
  if ((policy.metadata.finalizers ?? []).includes(fin) && policy.metadata.labels?.[idLabel]) return policy;
  const ref = { gk: policyGk(kind), namespace: policy.metadata.namespace ?? "", name: policy.metadata.name ?? "" };
  const updated = await d.store.mutate<P>(ref, (cur) => {
    if (cur.metadata.deletionTimestamp) return undefined;
    const hasFin = (cur.metadata.finalizers ?? []).includes(fin);
    const hasId = !!cur.metadata.labels?.[idLabel];
    if (hasFin && hasId) return undefined;
    cur.metadata.finalizers = hasFin ? cur.metadata.finalizers : [...(cur.metadata.finalizers ?? []), fin];
    if (!hasId) cur.metadata.labels = { ...cur.metadata.labels, [idLabel]: d.uuid() };
    return cur;
  });
  if (!updated) throw new Error(`${kind} ${ref.namespace ? ref.namespace + "/" : ""}${ref.name} is gone`);
  if (updated.metadata.deletionTimestamp) throw new Error(`${kind} ${ref.namespace ? ref.namespace + "/" : ""}${ref.name} is being deleted`);
  return updated;
}

/** Removes the claim of the policy with this id from one object, if it still carries it (retrying on conflict). */
export async function stripClaim(store: ObjectStore, ref: KeyRef, kind: PolicyKind, id: string): Promise<void> {
  await store.mutate<KubeObject>(ref, (cur) => (claimedById(cur.metadata, kind, id) ? { ...cur, metadata: withoutClaimMeta(cur.metadata, kind) } : undefined));
}

/**
 * Drops a policy's claim from a template and its binding: the binding first, so that a failure
 * half-way leaves the template still claimed and the work is found again on retry.
 * The binding, its Works and the member objects stay.
 */
export async function releaseTemplate(store: ObjectStore, t: KubeObject, kind: PolicyKind, id: string): Promise<void> {
  await stripClaim(store, bindingRefFor(t), kind, id);
  await stripClaim(store, toRef(t), kind, id);
}

/** updateStatus with the resourceVersion read; on conflict, read-modify-write with `recompute`. */
export async function writeStatus<T extends KubeObject>(store: ObjectStore, ref: KeyRef, desired: T, recompute: (cur: T) => T | undefined): Promise<T | undefined> {
  try {
    return await store.updateStatus(desired);
  } catch (e) {
    if (!isConflict(e)) throw e;
  }
  return store.mutate<T>(ref, recompute, { status: true });
}
