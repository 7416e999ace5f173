import { formatResourceList, parseResourceList, type ResourceAmounts } from "@flotilla/api";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The parts of a Node the summaries and the estimator read. */
export interface NodeLike {
  metadata?: { name?: string; labels?: Record<string, string> };
  spec?: { unschedulable?: boolean; taints?: { key?: string; value?: string; effect?: string }[] };
  status?: { allocatable?: Record<string, unknown>; conditions?: { type?: string; status?: string }[] };
}

/** The parts of a Pod the summaries and the estimator read. */
export interface PodLike {
  spec?: {
    nodeName?: string;
    containers?: { resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> } }[];
    initContainers?: { resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> } }[];
    overhead?: Record<string, unknown>;
  };
  status?: { phase?: string };
}

function add(into: ResourceAmounts, a: ResourceAmounts): void {
  for (const [k, v] of Object.entries(a)) into[k] = (into[k] ?? 0) + v;
}

function containerRequests(c: { resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> } }): ResourceAmounts {
  // A missing request defaults to the limit, as the API server defaults it.
  return parseResourceList({ ...(c.resources?.limits ?? {}), ...(c.resources?.requests ?? {}) });
}

/**
 * A pod's requests (upstream's AddPodRequest / the scheduler's computePodResourceRequest):
 * the sum over containers, raised to the largest init container per resource, plus overhead.
 * CPU is in millicores, everything else in its integer value. `pods` is not included.
 */
export function podRequests(pod: PodLike): ResourceAmounts {
  const out: ResourceAmounts = {};
  for (const c of pod.spec?.containers ?? []) add(out, containerRequests(c));
  for (const c of pod.spec?.initContainers ?? []) {
    for (const [k, v] of Object.entries(containerRequests(c))) if (v > (out[k] ?? 0)) out[k] = v;
  }
  if (isObj(pod.spec?.overhead)) add(out, parseResourceList(pod.spec!.overhead));
  return out;
}

const isTerminal = (p: PodLike) => p.status?.phase === "Succeeded" || p.status?.phase === "Failed";

export function nodeReady(n: NodeLike): boolean {
  return (n.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
}

/** Cluster.status.nodeSummary: all nodes and the Ready ones. */
export function nodeSummary(nodes: NodeLike[]): { totalNum: number; readyNum: number } {
  return { totalNum: nodes.length, readyNum: nodes.filter(nodeReady).length };
}

export interface ResourceSummaryJson {
  allocatable: Record<string, string>;
  allocated: Record<string, string>;
  allocating: Record<string, string>;
}

/**
 * Cluster.status.resourceSummary (upstream getResourceSummary): allocatable = the sum of every
 * node's allocatable; allocated = the requests of pods bound to a node that are neither
 * Succeeded nor Failed, with `pods` their count; allocating = the requests of pods not yet
 * bound to a node, with `pods` their count. Zero amounts are left out, as upstream's
 * Resource.ResourceList() does.
 */
export function resourceSummary(nodes: NodeLike[], pods: PodLike[]): ResourceSummaryJson {
  const allocatable: ResourceAmounts = {};
  for (const n of nodes) add(allocatable, parseResourceList(n.status?.allocatable));
  const allocated: ResourceAmounts = {};
  const allocating: ResourceAmounts = {};
  let bound = 0;
  let pending = 0;
  for (const p of pods) {
    if (p.spec?.nodeName) {
      if (isTerminal(p)) continue;
      add(allocated, podRequests(p));
      bound++;
    } else {
      add(allocating, podRequests(p));
      pending++;
    }
  }
  allocated.pods = bound;
  allocating.pods = pending;
  const nonZero = (a: ResourceAmounts) => Object.fromEntries(Object.entries(a).filter(([, v]) => v > 0));
  return { allocatable: formatResourceList(nonZero(allocatable)), allocated: formatResourceList(nonZero(allocated)), allocating: formatResourceList(nonZero(allocating)) };
}
