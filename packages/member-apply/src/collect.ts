import { setCondition, type Cluster, type Condition, type ResourceModel } from "@flotilla/api";
import type { MemberClient } from "@flotilla/kube";
import { ConditionCompleteAPIEnablements } from "./logic/cluster-ready.js";
import { allocatableModelings } from "./logic/modeling.js";
import { nodeSummary, resourceSummary, type NodeLike, type PodLike } from "./logic/resources.js";

export type ClusterStatus = NonNullable<Cluster["status"]>;

/** When each member's discovery was last read, per client (a new client reads it at once). */
const discoveredAt = new WeakMap<MemberClient, number>();

/**
 * Version, API enablements, node and resource summaries of a Ready member (upstream's
 * cluster-status collection); each part keeps its old value when it cannot be read. Discovery
 * is read again at most every `discoveryRefreshMs` per client. With the Cluster's
 * `resourceModels`, the resource summary carries `allocatableModelings` (its nodes per grade);
 * without, it carries none (a stale count from removed models is dropped). The listed nodes and
 * pods are returned too (the estimator's capacity snapshot).
 */
export async function collectClusterStatus(
  client: MemberClient,
  status: ClusterStatus,
  o: { timeoutMs: number; signal: AbortSignal; now: Date; discoveryRefreshMs: number; resourceModels?: readonly ResourceModel[] },
): Promise<{ status: ClusterStatus; nodes?: NodeLike[]; pods?: PodLike[] }> {
  const ro = { timeoutMs: o.timeoutMs, signal: o.signal };
  const now = o.now;
  const last = discoveredAt.get(client);
  const discover = last === undefined || now.getTime() - last >= o.discoveryRefreshMs || !status.apiEnablements?.length;
  const [version, disc, nodes, pods] = await Promise.allSettled([client.version(ro), discover ? client.discovery(ro) : Promise.resolve(undefined), client.listNodes(ro), client.listPods(ro)]);
  const next: ClusterStatus = { ...status };
  if (version.status === "fulfilled" && version.value.gitVersion) next.kubernetesVersion = version.value.gitVersion;
  if (disc.status === "fulfilled" && disc.value === undefined) {
    // discovery read recently: the enablements and their condition stay
    return finish();
  }
  if (disc.status === "fulfilled") discoveredAt.set(client, now.getTime());
  let apiCondition: Omit<Condition, "lastTransitionTime">;
  if (disc.status === "fulfilled" && disc.value && disc.value.enablements.length > 0) {
    next.apiEnablements = disc.value.enablements;
    apiCondition = disc.value.complete
      ? { type: ConditionCompleteAPIEnablements, status: "True", reason: "Complete", message: "collected complete APIEnablements from the cluster" }
      : { type: ConditionCompleteAPIEnablements, status: "False", reason: "Partial", message: `might collect partial APIEnablements(${disc.value.enablements.length}) from the cluster` };
  } else {
    apiCondition = { type: ConditionCompleteAPIEnablements, status: "False", reason: "Empty", message: "collected empty APIEnablements from the cluster" };
  }
  next.conditions = setCondition(next.conditions, apiCondition, now);
  return finish();

  function finish() {
    let nodeItems: NodeLike[] | undefined;
    let podItems: PodLike[] | undefined;
    if (nodes.status === "fulfilled" && pods.status === "fulfilled") {
      nodeItems = nodes.value.items as NodeLike[];
      podItems = pods.value.items as PodLike[];
      next.nodeSummary = nodeSummary(nodeItems);
      const modelings = allocatableModelings(o.resourceModels, nodeItems, podItems);
      const { allocatableModelings: _old, ...kept } = status.resourceSummary ?? {};
      next.resourceSummary = { ...kept, ...resourceSummary(nodeItems, podItems), ...(modelings ? { allocatableModelings: modelings } : {}) };
    } else if (!o.resourceModels?.length && next.resourceSummary?.allocatableModelings) {
      // the models are gone: their counts go with them even when the nodes cannot be read now
      const { allocatableModelings: _old, ...kept } = next.resourceSummary;
      next.resourceSummary = kept;
    }
    return { status: next, nodes: nodeItems, pods: podItems };
  }
}
