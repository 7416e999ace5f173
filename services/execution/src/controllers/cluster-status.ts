import { isDeepStrictEqual } from "node:util";
import { isConflict, type Cluster, type Condition } from "@flotilla/api";
import type { HealthResult, MemberClient } from "@flotilla/kube";
import type { ObjectStore } from "@flotilla/store";
import { after, done, type Reconciler, type Result, type SeenVersions } from "@flotilla/runtime";
import { ConditionCompleteAPIEnablements, ReadyReasons, generateReadyCondition, type ObservedReady, type ReadyThresholds } from "../logic/cluster-ready.js";
import { k8sTime, setCondition } from "../logic/conditions.js";
import { nodeSummary, resourceSummary, type NodeLike, type PodLike } from "../logic/resources.js";
import type { ClusterCache } from "./cluster-cache.js";
import type { Members } from "./members.js";

export const name = "cluster-status";

export interface ClusterStatusConfig {
  /** CLUSTER_STATUS_UPDATE_FREQUENCY: time between two probes of one cluster. */
  updateFrequencyMs: number;
  /** Timeout of the health probe (and of each collection request). */
  probeTimeoutMs: number;
  /** Discovery (API enablements) is read again at most this often per member. */
  discoveryRefreshMs: number;
}

export interface ClusterStatusDeps {
  store: ObjectStore;
  clusters: ClusterCache;
  members: Members;
  thresholds: ReadyThresholds;
  /** Versions of Clusters this controller wrote (their wake-ups are echoes). */
  seen: SeenVersions;
  cfg: ClusterStatusConfig;
  now?: () => Date;
  /** Every probe's outcome (latency, verdict), for metrics and the load test. */
  onProbe?: (cluster: string, h: HealthResult | undefined) => void;
}

type Status = NonNullable<Cluster["status"]>;

/** Version, API enablements, node and resource summaries of a Ready member; each part keeps its old value when it cannot be read. */
/** When each member's discovery was last read, per client (a new client reads it at once). */
const discoveredAt = new WeakMap<MemberClient, number>();

async function collect(client: MemberClient, status: Status, o: { timeoutMs: number; signal: AbortSignal; now: Date; discoveryRefreshMs: number }): Promise<{ status: Status; nodes?: NodeLike[]; pods?: PodLike[] }> {
  const ro = { timeoutMs: o.timeoutMs, signal: o.signal };
  const now = o.now;
  const last = discoveredAt.get(client);
  const discover = last === undefined || now.getTime() - last >= o.discoveryRefreshMs || !status.apiEnablements?.length;
  const [version, disc, nodes, pods] = await Promise.allSettled([client.version(ro), discover ? client.discovery(ro) : Promise.resolve(undefined), client.listNodes(ro), client.listPods(ro)]);
  const next: Status = { ...status };
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
      next.resourceSummary = { ...(status.resourceSummary ?? {}), ...resourceSummary(nodeItems, podItems) };
    }
    return { status: next, nodes: nodeItems, pods: podItems };
  }
}

/** Whether two statuses say the same, ignoring condition transition times. */
function sameStatus(a: Status | undefined, b: Status | undefined): boolean {
  const norm = (s: Status | undefined) =>
    JSON.parse(JSON.stringify({ ...(s ?? {}), conditions: (s?.conditions ?? []).map(({ lastTransitionTime: _t, ...c }) => c).sort((x, y) => ((x.type ?? "") < (y.type ?? "") ? -1 : 1)) }));
  return isDeepStrictEqual(norm(a), norm(b));
}

/**
 * Upstream's cluster-status controller: every `updateFrequencyMs` probe the member's /readyz
 * (/healthz on 404), smooth the observed Ready condition with the success/failure thresholds,
 * and write it; while the published condition is Ready, also collect the Kubernetes version,
 * API enablements, node and resource summaries (and the estimator's capacity snapshot).
 * A cluster being deleted is no longer probed.
 */
export function clusterStatusController(d: ClusterStatusDeps): Reconciler<string> {
  const now = d.now ?? (() => new Date());
  return {
    name,
    async reconcile(clusterName, ctx): Promise<Result> {
      const started = Date.now();
      // the cache is refreshed by every Cluster/Secret wake-up and every CLUSTER_CACHE_REFRESH; a stale copy only costs a conflict below
      const entry = d.clusters.get(clusterName) ?? (await d.clusters.fresh(clusterName));
      if (!entry || entry.deleting) {
        d.thresholds.forget(clusterName);
        d.members.drop(clusterName);
        return done();
      }
      const cluster = entry.cluster;
      let observed: ObservedReady;
      let health: HealthResult | undefined;
      let client: MemberClient | undefined;
      if (!entry.endpoint.ok) {
        observed = { type: "Ready", status: "False", reason: ReadyReasons.collectionFailed, message: `failed to build a client for the cluster: ${entry.endpoint.reason}` };
      } else {
        client = d.members.client(clusterName, entry.endpoint.endpoint);
        health = await client.health({ timeoutMs: d.cfg.probeTimeoutMs, signal: ctx.signal });
        observed = generateReadyCondition(health.online, health.healthy);
      }
      d.onProbe?.(clusterName, health);
      const t = now();
      const ready = d.thresholds.adjust(clusterName, cluster.status?.conditions, observed, t.getTime());

      let status: Status = structuredClone(cluster.status ?? {});
      if (client && health?.online && health.healthy && ready.status === "True") {
        const c = await collect(client, status, { timeoutMs: d.cfg.probeTimeoutMs, signal: ctx.signal, now: t, discoveryRefreshMs: d.cfg.discoveryRefreshMs });
        status = c.status;
        if (c.nodes && c.pods) d.members.setCapacity(clusterName, c.nodes, c.pods);
      }
      // lastHeartbeatTime: stamped on every probe, so the taint-manager's health monitor can tell a live reporter from a dead one.
      status.conditions = setCondition(status.conditions, { type: "Ready", status: ready.status, reason: ready.reason, message: ready.message, lastHeartbeatTime: k8sTime(t) }, t);

      if (!sameStatus(cluster.status, status)) {
        try {
          const out = await d.store.updateStatus<Cluster>({ ...cluster, status });
          d.seen.wrote(clusterName, out.metadata.resourceVersion);
          d.clusters.note(out);
        } catch (e) {
          if (isConflict(e)) {
            await d.clusters.fresh(clusterName);
            throw new Error(`cluster ${clusterName} changed while its status was written; retrying`);
          }
          throw e;
        }
      }

      const elapsed = Date.now() - started;
      let next = d.cfg.updateFrequencyMs - elapsed;
      const flip = d.thresholds.pendingFlipMs(clusterName, status.conditions, Date.now());
      if (flip !== undefined) next = Math.min(next, flip + 1);
      return after(Math.max(1, next));
    },
  };
}
