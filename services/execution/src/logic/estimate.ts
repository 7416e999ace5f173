import { parseResourceList, type ResourceAmounts } from "@flotilla/api";
import { nodeReady, podRequests, type NodeLike, type PodLike } from "@flotilla/member-apply";

export interface TaintLike {
  key?: string;
  value?: string;
  effect?: string;
}

export interface TolerationLike {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

export interface NodeSelectorRequirementLike {
  key?: string;
  operator?: string;
  values?: string[];
}

export interface NodeSelectorLike {
  nodeSelectorTerms?: { matchExpressions?: NodeSelectorRequirementLike[]; matchFields?: NodeSelectorRequirementLike[] }[];
}

/** ResourceBinding.spec.replicaRequirements (JSON). */
export interface ReplicaRequirementsLike {
  nodeClaim?: { hardNodeAffinity?: NodeSelectorLike; nodeSelector?: Record<string, string>; tolerations?: TolerationLike[] };
  resourceRequest?: Record<string, string>;
}

/** What one node can still give, precomputed from a snapshot of nodes and pods. */
export interface NodeCapacity {
  name: string;
  labels: Record<string, string>;
  /** The node's taints, plus the ones Kubernetes derives from `spec.unschedulable` and a not-Ready condition. */
  taints: TaintLike[];
  /** allocatable − requested of the pods bound to it, never below zero (cpu in millicores). */
  free: ResourceAmounts;
  /** Pod slots left: allocatable pods − pods bound to it. */
  freePods: number;
}

const INT32_MAX = 2 ** 31 - 1;

/**
 * Per-node free resources (the estimator's NodeInfo: Allocatable − Requested, pods counted
 * separately). Pods that are Succeeded or Failed hold nothing.
 */
export function nodeCapacities(nodes: NodeLike[], pods: PodLike[]): NodeCapacity[] {
  const requested = new Map<string, { res: ResourceAmounts; pods: number }>();
  for (const p of pods) {
    const n = p.spec?.nodeName;
    if (!n || p.status?.phase === "Succeeded" || p.status?.phase === "Failed") continue;
    let r = requested.get(n);
    if (!r) requested.set(n, (r = { res: {}, pods: 0 }));
    r.pods++;
    for (const [k, v] of Object.entries(podRequests(p))) r.res[k] = (r.res[k] ?? 0) + v;
  }
  return nodes.map((n) => {
    const name = n.metadata?.name ?? "";
    const alloc = parseResourceList(n.status?.allocatable);
    const used = requested.get(name) ?? { res: {}, pods: 0 };
    const free: ResourceAmounts = {};
    for (const [k, v] of Object.entries(alloc)) if (k !== "pods") free[k] = Math.max(0, v - (used.res[k] ?? 0));
    const taints: TaintLike[] = [...(n.spec?.taints ?? [])];
    if (n.spec?.unschedulable) taints.push({ key: "node.kubernetes.io/unschedulable", effect: "NoSchedule" });
    if (!nodeReady(n)) taints.push({ key: "node.kubernetes.io/not-ready", effect: "NoExecute" });
    return { name, labels: n.metadata?.labels ?? {}, taints, free, freePods: Math.max(0, (alloc.pods ?? 0) - used.pods) };
  });
}

/** v1 toleration semantics: the effect matches (or is empty) and the key/operator/value match. */
export function tolerates(t: TolerationLike, taint: TaintLike): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  const op = t.operator || "Equal";
  if (!t.key) return op === "Exists";
  if (t.key !== taint.key) return false;
  if (op === "Exists") return true;
  return op === "Equal" && (t.value ?? "") === (taint.value ?? "");
}

/** IsTolerationMatched: every NoSchedule/NoExecute taint of the node is tolerated. */
export function tolerationsMatch(node: NodeCapacity, tolerations: TolerationLike[] = []): boolean {
  return node.taints.filter((t) => t.effect === "NoSchedule" || t.effect === "NoExecute").every((taint) => tolerations.some((t) => tolerates(t, taint)));
}

function requirementMatches(r: NodeSelectorRequirementLike, value: string | undefined): boolean {
  const vals = r.values ?? [];
  switch (r.operator) {
    case "In":
      return value !== undefined && vals.includes(value);
    case "NotIn":
      return value === undefined || !vals.includes(value);
    case "Exists":
      return value !== undefined;
    case "DoesNotExist":
      return value === undefined;
    case "Gt":
    case "Lt": {
      if (value === undefined || vals.length !== 1 || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(vals[0]!)) return false;
      return r.operator === "Gt" ? Number(value) > Number(vals[0]) : Number(value) < Number(vals[0]);
    }
    default:
      return false;
  }
}

/**
 * The node claim's required node affinity: every nodeSelector label, and (when terms are
 * given) at least one term whose expressions (labels) and fields (metadata.name) all match.
 */
export function nodeAffinityMatches(node: NodeCapacity, claim: ReplicaRequirementsLike["nodeClaim"]): boolean {
  for (const [k, v] of Object.entries(claim?.nodeSelector ?? {})) if (node.labels[k] !== v) return false;
  const terms = claim?.hardNodeAffinity?.nodeSelectorTerms;
  if (!terms) return true;
  return terms.some((term) => {
    const exprs = term.matchExpressions ?? [];
    const fields = term.matchFields ?? [];
    if (exprs.length === 0 && fields.length === 0) return false;
    return exprs.every((e) => requirementMatches(e, e.key === undefined ? undefined : node.labels[e.key])) && fields.every((f) => (f.key === "metadata.name" ? requirementMatches(f, node.name) : false));
  });
}

/**
 * Replicas one node can take (nodeMaxAvailableReplica + Resource.MaxDivided): the minimum over
 * the requested resources of floor(free / request), capped by the free pod slots. A requested
 * resource the node does not have at all gives 0.
 */
export function nodeMaxReplicas(node: NodeCapacity, request: ResourceAmounts): number {
  let res = Number.MAX_SAFE_INTEGER;
  for (const [k, want] of Object.entries(request)) {
    if (k === "pods" || !(want > 0)) continue;
    const have = node.free[k];
    if (have === undefined) return 0;
    res = Math.min(res, Math.floor(have / want));
  }
  return Math.min(res, node.freePods);
}

/**
 * The maximum number of replicas shaped like `req` that the cluster can still take: the sum
 * over nodes that match the node claim (affinity, selector, tolerations) of what each can take.
 */
export function maxAvailableReplicas(nodes: NodeCapacity[], req: ReplicaRequirementsLike | undefined): number {
  const request = parseResourceList(req?.resourceRequest);
  let total = 0;
  for (const n of nodes) {
    if (!nodeAffinityMatches(n, req?.nodeClaim) || !tolerationsMatch(n, req?.nodeClaim?.tolerations)) continue;
    total += nodeMaxReplicas(n, request);
    if (total >= INT32_MAX) return INT32_MAX;
  }
  return total;
}
