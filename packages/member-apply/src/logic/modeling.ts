import {
  ZERO_QUANTITY,
  compareQuantity,
  milliQuantityOf,
  quantityOf,
  quantityValueBig,
  subtractQuantity,
  tryParseQuantity,
  type AllocatableModeling,
  type Quantity,
  type ResourceModel,
} from "@flotilla/api";
import { podRequests, type NodeLike, type PodLike } from "./resources.js";

const isTerminal = (p: PodLike) => p.status?.phase === "Succeeded" || p.status?.phase === "Failed";

/** What the pods bound to one node request: amounts as podRequests gives them (cpu in millicores), and their count. */
export interface NodeLoad {
  requests: Map<string, bigint>;
  pods: bigint;
}

/** The requests of the pods bound to each node (spec.nodeName set, neither Succeeded nor Failed). */
function loadByNode(pods: PodLike[]): Map<string, NodeLoad> {
  const out = new Map<string, NodeLoad>();
  for (const p of pods) {
    const node = p.spec?.nodeName;
    if (!node || isTerminal(p)) continue;
    let load = out.get(node);
    if (!load) out.set(node, (load = { requests: new Map(), pods: 0n }));
    for (const [k, v] of Object.entries(podRequests(p))) load.requests.set(k, (load.requests.get(k) ?? 0n) + BigInt(v));
    load.pods++;
  }
  return out;
}

/**
 * What a node has left for new pods (upstream's getNodeAvailable): its allocatable, less the
 * requests of its pods for each resource it lists (a request for a resource it does not list is
 * not subtracted) and less their count from `pods`. Undefined when the pods use up its pod slots
 * (upstream then leaves the node out of the models). Exact: quantities, never floats.
 */
export function nodeAvailable(node: NodeLike, load: NodeLoad | undefined): Map<string, Quantity> | undefined {
  const out = new Map<string, Quantity>();
  for (const [k, v] of Object.entries(node.status?.allocatable ?? {})) {
    const q = tryParseQuantity(v);
    if (q) out.set(k, q);
  }
  if (!load) return out;
  const pods = out.get("pods") ?? ZERO_QUANTITY;
  if (quantityValueBig(pods) - load.pods <= 0n) return undefined;
  out.set("pods", subtractQuantity(pods, quantityOf(load.pods)));
  for (const [k, amount] of load.requests) {
    const have = out.get(k);
    if (have) out.set(k, subtractQuantity(have, k === "cpu" ? milliQuantityOf(amount) : quantityOf(amount)));
  }
  return out;
}

/** The index of the last minimum `<= amount` (mins ascending), or -1 (upstream's searchLastLessElement). */
function lastAtMost(mins: readonly Quantity[], amount: Quantity): number {
  for (let i = mins.length - 1; i >= 0; i--) if (compareQuantity(mins[i]!, amount) <= 0) return i;
  return -1;
}

/**
 * Cluster.status.resourceSummary.allocatableModelings (upstream's getAllocatableModelings with
 * pkg/modeling): for each node, what it has left (nodeAvailable); its grade index is the smallest,
 * over the resources of the first model in their order, of the index of the last grade whose
 * minimum of that resource is at most what the node has of it (a resource the node does not list
 * counts as 0). Nodes are counted per grade, and the result has one entry per model, in the
 * models' order, with the model's grade and its count (0 included). A node that fits no grade (it
 * has less than the first grade's minimum, e.g. overcommitted) or whose pods fill its pod slots is
 * not counted. Undefined without models (nothing to report), or when the first model has no ranges.
 *
 * Upstream stops counting at the first node whose pods fill its slots (a `break`, karmada-io/karmada
 * #7757); that node alone is skipped here, as the fix there does.
 */
export function allocatableModelings(models: readonly ResourceModel[] | undefined, nodes: readonly NodeLike[], pods: PodLike[]): AllocatableModeling[] | undefined {
  if (!models?.length) return undefined;
  const names = (models[0]!.ranges ?? []).map((r) => r.name ?? "");
  if (names.length === 0) return undefined;
  // per resource, each grade's minimum (a model that does not name the resource: 0)
  const mins = names.map((n) => models.map((m) => tryParseQuantity(m.ranges?.find((r) => r.name === n)?.min) ?? ZERO_QUANTITY));
  const counts = models.map(() => 0);
  const loads = loadByNode(pods);
  for (const node of nodes) {
    const available = nodeAvailable(node, loads.get(node.metadata?.name ?? ""));
    if (!available) continue;
    let grade = Infinity;
    names.forEach((n, i) => {
      const g = lastAtMost(mins[i]!, available.get(n) ?? ZERO_QUANTITY);
      if (g < grade) grade = g;
    });
    if (grade >= 0 && grade < counts.length) counts[grade]!++;
  }
  return models.map((m, i) => ({ grade: m.grade ?? 0, count: counts[i]! }));
}
