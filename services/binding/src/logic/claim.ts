import {
  ClusterPropagationPolicyAnnotation,
  ClusterPropagationPolicyLabel,
  ClusterPropagationPolicyPermanentIDLabel,
  PropagationPolicyNameAnnotation,
  PropagationPolicyNameLabel,
  PropagationPolicyNamespaceAnnotation,
  PropagationPolicyNamespaceLabel,
  PropagationPolicyPermanentIDLabel,
  type AnyPropagationPolicy,
  type ObjectMeta,
} from "@flotilla/api";

export type PolicyKind = "PropagationPolicy" | "ClusterPropagationPolicy";

/** Which policy claims an object: its kind, namespace ("" for a CPP), name and permanent id. */
export interface Claim {
  kind: PolicyKind;
  namespace: string;
  name: string;
  id: string;
}

export function idLabelOf(kind: PolicyKind): string {
  return kind === "PropagationPolicy" ? PropagationPolicyPermanentIDLabel : ClusterPropagationPolicyPermanentIDLabel;
}

/** The claim a policy puts on what it selects. */
export function claimFor(policy: AnyPropagationPolicy): Claim {
  const kind = policy.kind as PolicyKind;
  return {
    kind,
    namespace: kind === "PropagationPolicy" ? (policy.metadata.namespace ?? "") : "",
    name: policy.metadata.name ?? "",
    id: policy.metadata.labels?.[idLabelOf(kind)] ?? "",
  };
}

/**
 * The claim an object carries: a PropagationPolicy claim (namespace and name annotations plus
 * the id label) is checked first, then a ClusterPropagationPolicy claim (name annotation plus
 * the id label).
 */
export function claimOf(meta: ObjectMeta): Claim | undefined {
  const a = meta.annotations ?? {};
  const l = meta.labels ?? {};
  const ppNs = a[PropagationPolicyNamespaceAnnotation];
  const ppName = a[PropagationPolicyNameAnnotation];
  const ppId = l[PropagationPolicyPermanentIDLabel];
  if (ppNs && ppName && ppId) return { kind: "PropagationPolicy", namespace: ppNs, name: ppName, id: ppId };
  const cppName = a[ClusterPropagationPolicyAnnotation];
  const cppId = l[ClusterPropagationPolicyPermanentIDLabel];
  if (cppName && cppId) return { kind: "ClusterPropagationPolicy", namespace: "", name: cppName, id: cppId };
  return undefined;
}

function omit(map: Record<string, string> | undefined, keys: readonly string[]): Record<string, string> | undefined {
  if (!map || !keys.some((k) => k in map)) return map;
  const out = { ...map };
  for (const k of keys) delete out[k];
  return Object.keys(out).length ? out : undefined;
}

function setMeta(meta: ObjectMeta, labels: Record<string, string> | undefined, annotations: Record<string, string> | undefined): ObjectMeta {
  const out: ObjectMeta = { ...meta, labels, annotations };
  if (!labels) delete out.labels;
  if (!annotations) delete out.annotations;
  return out;
}

const PP_LABELS = [PropagationPolicyPermanentIDLabel, PropagationPolicyNamespaceLabel, PropagationPolicyNameLabel];
const PP_ANNOTATIONS = [PropagationPolicyNamespaceAnnotation, PropagationPolicyNameAnnotation];
const CPP_LABELS = [ClusterPropagationPolicyPermanentIDLabel, ClusterPropagationPolicyLabel];
const CPP_ANNOTATIONS = [ClusterPropagationPolicyAnnotation];

/** CleanupPPClaimMetadata / CleanupCPPClaimMetadata (plus the deprecated claim labels). */
export function withoutClaimMeta(meta: ObjectMeta, kind: PolicyKind): ObjectMeta {
  return kind === "PropagationPolicy"
    ? setMeta(meta, omit(meta.labels, PP_LABELS), omit(meta.annotations, PP_ANNOTATIONS))
    : setMeta(meta, omit(meta.labels, CPP_LABELS), omit(meta.annotations, CPP_ANNOTATIONS));
}

/**
 * AddPPClaimMetadata / AddCPPClaimMetadata. A PropagationPolicy claim also drops any
 * ClusterPropagationPolicy claim (a PP takes over from a CPP).
 */
export function withClaimMeta(meta: ObjectMeta, c: Claim): ObjectMeta {
  if (c.kind === "PropagationPolicy") {
    const base = withoutClaimMeta(meta, "ClusterPropagationPolicy");
    return setMeta(
      base,
      { ...base.labels, [PropagationPolicyPermanentIDLabel]: c.id },
      { ...base.annotations, [PropagationPolicyNamespaceAnnotation]: c.namespace, [PropagationPolicyNameAnnotation]: c.name },
    );
  }
  return setMeta(meta, { ...meta.labels, [ClusterPropagationPolicyPermanentIDLabel]: c.id }, { ...meta.annotations, [ClusterPropagationPolicyAnnotation]: c.name });
}

/** Whether the object already carries exactly this claim (and, for a PP claim, no CPP claim). */
export function hasClaim(meta: ObjectMeta, c: Claim): boolean {
  const l = meta.labels ?? {};
  const a = meta.annotations ?? {};
  if (c.kind === "PropagationPolicy") {
    return (
      l[PropagationPolicyPermanentIDLabel] === c.id &&
      a[PropagationPolicyNamespaceAnnotation] === c.namespace &&
      a[PropagationPolicyNameAnnotation] === c.name &&
      !(ClusterPropagationPolicyPermanentIDLabel in l) &&
      !(ClusterPropagationPolicyAnnotation in a)
    );
  }
  return l[ClusterPropagationPolicyPermanentIDLabel] === c.id && a[ClusterPropagationPolicyAnnotation] === c.name;
}

/** NeedCleanupClaimMetadata: strip a claim only while it still belongs to the policy with this id. */
export function claimedById(meta: ObjectMeta, kind: PolicyKind, id: string): boolean {
  return !!id && meta.labels?.[idLabelOf(kind)] === id;
}
