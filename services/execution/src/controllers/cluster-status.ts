import { isDeepStrictEqual } from "node:util";
import { isConflict, rfc3339, setCondition, type Cluster } from "@flotilla/api";
import type { HealthResult, MemberClient } from "@flotilla/kube";
import type { ObjectStore } from "@flotilla/store";
import { after, done, type Reconciler, type Result, type SeenVersions } from "@flotilla/runtime";
import { ReadyReasons, collectClusterStatus, generateReadyCondition, type ObservedReady, type ReadyThresholds } from "@flotilla/member-apply";
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
  /** Whether this replica probes the cluster now (member sharding; default: every cluster). */
  owns?: (cluster: string) => boolean;
  now?: () => Date;
  /** Every probe's outcome (latency, verdict), for metrics and the load test. */
  onProbe?: (cluster: string, h: HealthResult | undefined) => void;
}

type Status = NonNullable<Cluster["status"]>;

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
 * A cluster being deleted, or in Pull mode (its agent reports), is not probed.
 */
export function clusterStatusController(d: ClusterStatusDeps): Reconciler<string> {
  const now = d.now ?? (() => new Date());
  return {
    name,
    async reconcile(clusterName, ctx): Promise<Result> {
      const started = Date.now();
      // another replica probes it; this one starts when it takes the cluster's lease
      if (d.owns && !d.owns(clusterName)) return done();
      // the cache follows the Clusters by watch and is refreshed by every Cluster/Secret wake-up; a stale copy only costs a conflict below
      const entry = d.clusters.get(clusterName) ?? (await d.clusters.fresh(clusterName));
      // a Pull cluster's agent reports its status (and renews its lease): no probing from here
      if (!entry || entry.deleting || entry.pull) {
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
        const c = await collectClusterStatus(client, status, { timeoutMs: d.cfg.probeTimeoutMs, signal: ctx.signal, now: t, discoveryRefreshMs: d.cfg.discoveryRefreshMs, resourceModels: cluster.spec?.resourceModels });
        status = c.status;
        // the snapshot's time is the heartbeat's, taken before the listing (the scheduler counts a
        // replica reported running before it as included, in the summary and in the estimator's answers)
        if (c.nodes && c.pods) d.members.setCapacity(clusterName, c.nodes, c.pods, t.getTime());
      }
      // lastHeartbeatTime: stamped on every probe, so the taint-manager's health monitor can tell a live reporter from a dead one.
      status.conditions = setCondition(status.conditions, { type: "Ready", status: ready.status, reason: ready.reason, message: ready.message, lastHeartbeatTime: rfc3339(t) }, t);

      if (!sameStatus(cluster.status, status)) {
        if (d.owns && !d.owns(clusterName)) return done(); // the lease ended during the probe: the next owner writes
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
