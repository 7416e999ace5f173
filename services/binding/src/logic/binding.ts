import { GK, BindingControllerFinalizer, ClusterResourceBindingControllerFinalizer, ClusterResourceBindingPermanentIDLabel, KARMADA, MoveBackAnnotation, ResourceBindingPermanentIDLabel, apiVersionOf, bindingName, jsonClean, jsonEqual, type AnyPropagationPolicy, type AnyResourceBinding, type KubeObject, type OwnerReference, type ResourceBindingSpec, type KeyRef } from "@flotilla/api";
import { createHash } from "node:crypto";
import { claimFor, hasClaim, withClaimMeta, withoutClaimMeta } from "./claim.js";
import { interpretReplicas } from "./replicas.js";

type Suspension = NonNullable<ResourceBindingSpec["suspension"]>;

/** The binding a template gets: a ResourceBinding next to a namespaced template, else a ClusterResourceBinding. */
export function bindingRefFor(t: Pick<KubeObject, "kind" | "metadata">): KeyRef {
  const ns = t.metadata.namespace ?? "";
  return { gk: ns ? GK.resourceBinding : GK.clusterResourceBinding, namespace: ns, name: bindingName(t.kind, t.metadata.name ?? "") };
}

export function isClusterBinding(b: Pick<AnyResourceBinding, "kind">): boolean {
  return b.kind === KARMADA.clusterResourceBinding.kind;
}

/** The permanent-id label of a binding's kind. */
export function bindingIdLabel(b: Pick<AnyResourceBinding, "kind">): string {
  return isClusterBinding(b) ? ClusterResourceBindingPermanentIDLabel : ResourceBindingPermanentIDLabel;
}

export function bindingId(b: Pick<AnyResourceBinding, "kind" | "metadata">): string | undefined {
  return b.metadata.labels?.[bindingIdLabel(b)] || undefined;
}

export function bindingFinalizer(b: Pick<AnyResourceBinding, "kind">): string {
  return isClusterBinding(b) ? ClusterResourceBindingControllerFinalizer : BindingControllerFinalizer;
}

/** metav1.NewControllerRef(template). */
export function controllerRef(t: KubeObject): OwnerReference {
  return { apiVersion: t.apiVersion, kind: t.kind, name: t.metadata.name ?? "", uid: t.metadata.uid ?? "", controller: true, blockOwnerDeletion: true };
}

/** The controlling owner's uid when it is not this template (upstream #2090: wait for the old binding's garbage collection). */
export function foreignOwner(b: Pick<AnyResourceBinding, "metadata">, t: KubeObject): string | undefined {
  const owner = (b.metadata.ownerReferences ?? []).find((o) => o.controller);
  return owner && owner.uid !== t.metadata.uid ? owner.uid : undefined;
}

/** The policy's part of a binding's suspension: dispatching and dispatchingOnClusters. */
function policySuspension(p: AnyPropagationPolicy): Suspension | undefined {
  const s = p.spec?.suspension;
  if (!s) return undefined;
  const out: Suspension = {};
  if (s.dispatching !== undefined) out.dispatching = s.dispatching;
  if (s.dispatchingOnClusters !== undefined) out.dispatchingOnClusters = s.dispatchingOnClusters;
  return out;
}

/**
 * util.MergePolicySuspension: the policy's dispatching settings replace the binding's; the
 * binding's own `scheduling` flag is kept. Undefined when nothing is left.
 */
export function mergeSuspension(binding: Suspension | undefined, policy: Suspension | undefined): Suspension | undefined {
  if (policy) {
    const out: Suspension = { ...policy };
    if (binding?.scheduling !== undefined) out.scheduling = binding.scheduling;
    return out;
  }
  if (!binding || binding.scheduling === undefined) return undefined;
  return { scheduling: binding.scheduling };
}

/**
 * BuildResourceBinding / BuildClusterResourceBinding: what the binding of `t` claimed by
 * `policy` should say. Replicas and requirements come from the template (GetReplicas); the
 * rest from the policy. `spec.clusters`, eviction tasks and `requiredBy` are never set here.
 */
export function buildBinding(t: KubeObject, policy: AnyPropagationPolicy): AnyResourceBinding {
  const ref = bindingRefFor(t);
  const cluster = ref.gk === GK.clusterResourceBinding;
  const type = cluster ? KARMADA.clusterResourceBinding : KARMADA.resourceBinding;
  const ps = policy.spec ?? {};
  const spec: ResourceBindingSpec = {
    resource: {
      apiVersion: t.apiVersion,
      kind: t.kind,
      ...(ref.namespace ? { namespace: ref.namespace } : {}),
      name: t.metadata.name ?? "",
      uid: t.metadata.uid ?? "",
      resourceVersion: t.metadata.resourceVersion ?? "",
    },
    placement: ps.placement ?? {},
  };
  if (ps.propagateDeps) spec.propagateDeps = true;
  if (ps.schedulerName) spec.schedulerName = ps.schedulerName;
  if (ps.failover) spec.failover = ps.failover;
  if (ps.conflictResolution) spec.conflictResolution = ps.conflictResolution;
  if (ps.preserveResourcesOnDeletion !== undefined) spec.preserveResourcesOnDeletion = ps.preserveResourcesOnDeletion;
  const suspension = policySuspension(policy);
  if (suspension) spec.suspension = suspension;
  const info = interpretReplicas(t);
  if (info && info.replicas > 0) spec.replicas = info.replicas;
  if (info?.requirements) spec.replicaRequirements = info.requirements;
  const metadata = withClaimMeta(
    {
      name: ref.name,
      ...(ref.namespace ? { namespace: ref.namespace } : {}),
      annotations: { [TemplateDigestAnnotation]: templateDigest(t), ...policyCopies(policy) },
      ownerReferences: [controllerRef(t)],
      finalizers: [cluster ? ClusterResourceBindingControllerFinalizer : BindingControllerFinalizer],
    },
    claimFor(policy),
  );
  return { apiVersion: apiVersionOf(type), kind: type.kind, metadata, spec };
}

/**
 * Where a binding records the template as it was when the binding was last rendered
 * (templateDigest), so that a Lazy policy can tell a template change from a policy change.
 */
export const TemplateDigestAnnotation = "binding.flotilla.io/template-digest";

/** Annotations that change without the user changing the template: Karmada's own and kubectl's copy of the last applied spec (which follows the generation anyway). */
const volatileKey = (k: string) => k.includes("karmada.io/") || k === "kubectl.kubernetes.io/last-applied-configuration";

/**
 * What "the template changed" means for lazy activation (upstream: a specification change of
 * the template, not a status or Karmada bookkeeping change): its generation (the store steps it
 * on every spec change) and its own labels and annotations, Karmada's left out.
 */
export function templateDigest(t: KubeObject): string {
  const own = (m: Record<string, string> | undefined) => Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => !volatileKey(k)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const basis = JSON.stringify([t.metadata.generation ?? 0, own(t.metadata.labels), own(t.metadata.annotations)]);
  return createHash("sha256").update(basis).digest("base64url").slice(0, 22);
}

/** The spec fields a policy decides (what activationPreference: Lazy holds back until the template changes). */
const POLICY_SPEC_FIELDS = ["placement", "propagateDeps", "schedulerName", "failover", "conflictResolution", "preserveResourcesOnDeletion", "suspension"] as const satisfies readonly (keyof ResourceBindingSpec)[];

/** The spec fields the detector owns; everything else (clusters, tasks, requiredBy, ...) belongs to others. */
const OWNED_SPEC_FIELDS = [
  "resource",
  "replicaRequirements",
  "replicas",
  "propagateDeps",
  "schedulerName",
  "placement",
  "failover",
  "conflictResolution",
  "preserveResourcesOnDeletion",
] as const satisfies readonly (keyof ResourceBindingSpec)[];

function dedupe(a: readonly string[] | undefined, b: readonly string[] | undefined): string[] {
  return [...new Set([...(a ?? []), ...(b ?? [])])];
}

/**
 * The CreateOrUpdate mutation of ApplyPolicy / ApplyClusterPolicy: onto the stored binding,
 * merge labels, annotations and finalizers, replace the owner references and the fields the
 * detector owns, merge the policy's suspension, and (for a PP claim) drop any CPP claim.
 * Fields written by the scheduler, the taint manager and the eviction controller are kept.
 */
export function mergeBinding(existing: AnyResourceBinding, desired: AnyResourceBinding, policy: AnyPropagationPolicy): AnyResourceBinding {
  let metadata = {
    ...existing.metadata,
    labels: { ...existing.metadata.labels, ...desired.metadata.labels },
    annotations: { ...existing.metadata.annotations, ...desired.metadata.annotations },
    finalizers: dedupe(existing.metadata.finalizers, desired.metadata.finalizers),
    ownerReferences: desired.metadata.ownerReferences,
  };
  // the policy's own annotations the binding carries follow the policy: gone from it, gone here
  for (const k of POLICY_ANNOTATIONS) if (desired.metadata.annotations?.[k] === undefined) delete metadata.annotations[k];
  if (policy.kind === "PropagationPolicy") metadata = withClaimMeta(withoutClaimMeta(metadata, "ClusterPropagationPolicy"), claimFor(policy)) as typeof metadata;
  const spec: ResourceBindingSpec = { ...existing.spec };
  for (const f of OWNED_SPEC_FIELDS) {
    const v = desired.spec?.[f];
    if (v === undefined) delete spec[f];
    else (spec as Record<string, unknown>)[f] = v;
  }
  const suspension = mergeSuspension(existing.spec?.suspension, policySuspension(policy));
  if (suspension) spec.suspension = suspension;
  else delete spec.suspension;
  if (holdsForLazyPolicy(existing, desired, policy)) {
    // activationPreference: Lazy: the policy's change waits for the template's next change
    for (const f of POLICY_SPEC_FIELDS) {
      const v = existing.spec?.[f];
      if (v === undefined) delete spec[f];
      else (spec as Record<string, unknown>)[f] = v;
    }
  }
  return { ...existing, metadata, spec };
}

/**
 * Whether a policy change is held back from this binding: the policy is Lazy, it already
 * claims the binding, and the template has not changed since the binding was last rendered
 * (a template claimed for the first time, or one that changed, takes the policy at once).
 */
export function holdsForLazyPolicy(existing: AnyResourceBinding, desired: AnyResourceBinding, policy: AnyPropagationPolicy): boolean {
  if (policy.spec?.activationPreference !== "Lazy" || !hasClaim(existing.metadata, claimFor(policy))) return false;
  const before = existing.metadata.annotations?.[TemplateDigestAnnotation];
  return before !== undefined && before === desired.metadata.annotations?.[TemplateDigestAnnotation];
}

/**
 * Whether a binding already says what the policy says (its claim, placement, failover,
 * propagateDeps, schedulerName, conflictResolution, preserveResourcesOnDeletion and dispatching
 * suspension): a policy change needs to re-apply only the bindings for which this is false.
 */
export function bindingFollowsPolicy(b: AnyResourceBinding, policy: AnyPropagationPolicy): boolean {
  if (!hasClaim(b.metadata, claimFor(policy))) return false;
  // a Lazy policy's change reaches the binding with the template's next change, not now
  if (policy.spec?.activationPreference === "Lazy") return true;
  const ps = policy.spec ?? {};
  const want: Partial<ResourceBindingSpec> = {
    placement: ps.placement ?? {},
    propagateDeps: ps.propagateDeps ? true : undefined,
    schedulerName: ps.schedulerName || undefined,
    failover: ps.failover,
    conflictResolution: ps.conflictResolution || undefined,
    preserveResourcesOnDeletion: ps.preserveResourcesOnDeletion,
    suspension: mergeSuspension(b.spec?.suspension, policySuspension(policy)),
  };
  for (const [k, v] of Object.entries(want)) if (!jsonEqual(jsonClean(v ?? null), jsonClean((b.spec as Record<string, unknown> | undefined)?.[k] ?? null))) return false;
  const copies = policyCopies(policy);
  return POLICY_ANNOTATIONS.every((k) => b.metadata.annotations?.[k] === copies[k]);
}

/** Flotilla's annotations of a policy that its bindings carry (the move-back setting). */
const POLICY_ANNOTATIONS = [MoveBackAnnotation] as const;

function policyCopies(policy: AnyPropagationPolicy): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of POLICY_ANNOTATIONS) {
    const v = policy.metadata?.annotations?.[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** Whether two bindings differ in anything but the template's resourceVersion (a status-only template write moves it). */
export function bindingChanged(before: AnyResourceBinding, after: AnyResourceBinding): boolean {
  const strip = (b: AnyResourceBinding) => {
    const { resourceVersion: _rv, ...resource } = b.spec?.resource ?? {};
    return { metadata: b.metadata, spec: { ...b.spec, resource } };
  };
  return !jsonEqual(strip(before), strip(after));
}

