import { GK, ClusterControllerFinalizer, executionNamespace, isNotFound, type AnyResourceBinding, type Cluster, type KubeObject } from "@flotilla/api";
import { after, done, type Reconciler, type Result } from "@flotilla/runtime";
import { bindingClusterIndex, bindingEvictingIndex } from "@flotilla/store";
import { monitorHealth, readyCondition, withReady } from "../logic/health.js";
import { HeartbeatObserver } from "../logic/heartbeats.js";
import { sparePolicyTaints } from "../logic/taint-policies.js";
import { TerminatingNoExecute, applyTaintPlan, planTaints, taintString, type TaintPlan } from "../logic/taints.js";
import type { ControllerDeps } from "./deps.js";


export const CLUSTER_CONTROLLER = "cluster";

/** Where a Pull cluster's agent renews its Lease (karmada-cluster/<cluster>, as karmada-agent). */
export const ClusterLeaseNamespace = "karmada-cluster";

export const EventReasonTaintClusterSucceed = "TaintClusterSucceed";
export const EventReasonClusterStatusUnknown = "ClusterStatusUnknown";
export const EventReasonRemoveClusterWaiting = "RemoveClusterWaiting";

function taintPlanFor(c: Cluster, d: ControllerDeps, now: number): TaintPlan {
  return planTaints({
    ready: readyCondition(c.status?.conditions),
    deleting: !!c.metadata.deletionTimestamp,
    failover: d.cfg.FAILOVER && d.cfg.ENABLE_CLUSTER_NO_EXECUTE_TAINTS,
    failoverEvictionTimeoutMs: d.cfg.FAILOVER_EVICTION_TIMEOUT,
    now,
  });
}

/**
 * The cluster controller (Karmada's cluster-controller as of v1.3–v1.5, key = cluster name):
 * - the health monitor: a Ready condition nobody has confirmed for CLUSTER_MONITOR_GRACE_PERIOD
 *   becomes Unknown (status write); the period counts from when this process first saw the
 *   current heartbeat (HeartbeatObserver), so a restart after a long stop starts it afresh; a
 *   Pull cluster's Lease karmada-cluster/<cluster> counts too: a renewTime this process has not
 *   seen before is a sign of life as a new heartbeat is (upstream's lease-based probe);
 * - taints from the Ready condition (see planTaints), each new one with timeAdded, users' taints
 *   left alone, taints a ClusterTaintPolicy added never removed (sparePolicyTaints), the
 *   NoExecute ones only with FAILOVER and ENABLE_CLUSTER_NO_EXECUTE_TAINTS, and the finalizer
 *   karmada.io/cluster-controller;
 * - a durable come-back at the earliest of "the heartbeat runs out" and "a NoExecute taint falls due";
 * - deletion: terminating:NoExecute, then wait until no binding lists the cluster or has a
 *   graceful-eviction task from it, delete the Works in its execution namespace, wait for
 *   them to go, and drop the finalizer.
 */
export function clusterController(d: ControllerDeps, heartbeats = new HeartbeatObserver(), leases = new HeartbeatObserver()): Reconciler<string> {
  return {
    name: CLUSTER_CONTROLLER,
    async reconcile(name, { log }) {
      const ref = { gk: GK.cluster, namespace: "", name };
      let c = await d.store.get<Cluster>(ref);
      if (!c) {
        heartbeats.forget(name);
        leases.forget(name);
        return done();
      }
      if (c.metadata.deletionTimestamp) return removeCluster(d, c);

      const now = d.now().getTime();
      const observedAt = (cl: Cluster) => heartbeats.observe(name, readyCondition(cl.status?.conditions)?.lastHeartbeatTime, now);
      const leaseObservedAt = async (cl: Cluster) => (cl.spec?.syncMode === "Pull" ? leases.observe(name, await leaseRenewTime(d, name), now) : undefined);
      const monitor = monitorHealth({
        ready: readyCondition(c.status?.conditions),
        observedAt: observedAt(c),
        leaseObservedAt: await leaseObservedAt(c),
        creationTimestamp: c.metadata.creationTimestamp,
        deleting: false,
        graceMs: d.cfg.CLUSTER_MONITOR_GRACE_PERIOD,
        startupGraceMs: d.cfg.CLUSTER_STARTUP_GRACE_PERIOD,
        now,
      });
      let recheckAt = monitor.kind === "fresh" ? monitor.recheckAt : undefined;
      if (monitor.kind === "stale") {
        // decide again on the stored object: a heartbeat or a lease renewal that landed meanwhile wins
        const leaseSeen = await leaseObservedAt(c);
        const r = await d.store.mutateWritten<Cluster>(ref, (cur) => {
          const m = monitorHealth({
            ready: readyCondition(cur.status?.conditions),
            observedAt: observedAt(cur),
            leaseObservedAt: cur.spec?.syncMode === "Pull" ? leaseSeen : undefined,
            creationTimestamp: cur.metadata.creationTimestamp,
            deleting: !!cur.metadata.deletionTimestamp,
            graceMs: d.cfg.CLUSTER_MONITOR_GRACE_PERIOD,
            startupGraceMs: d.cfg.CLUSTER_STARTUP_GRACE_PERIOD,
            now,
          });
          if (m.kind !== "stale") return undefined;
          cur.status = { ...cur.status, conditions: withReady(cur.status?.conditions, m.condition) };
          return cur;
        }, { status: true, first: c });
        if (!r.obj) return done();
        c = r.obj;
        if (r.written) {
          const ready = readyCondition(c.status?.conditions);
          log.info({ cluster: name, reason: ready?.reason }, "cluster status is stale; Ready set to Unknown");
          await d.events.warning(c, EventReasonClusterStatusUnknown, `${ready?.message ?? "Cluster status is stale."} Ready set to Unknown.`);
        }
        if (c.metadata.deletionTimestamp) return removeCluster(d, c);
      }

      let added: string[] = [];
      let removed: string[] = [];
      const r = await d.store.mutateWritten<Cluster>(ref, (cur) => {
        if (cur.metadata.deletionTimestamp) return undefined;
        let changed = false;
        if (!(cur.metadata.finalizers ?? []).includes(ClusterControllerFinalizer)) {
          cur.metadata.finalizers = [...(cur.metadata.finalizers ?? []), ClusterControllerFinalizer];
          changed = true;
        }
        const applied = applyTaintPlan(cur.spec?.taints, sparePolicyTaints(taintPlanFor(cur, d, now), cur), now);
        added = applied ? applied.added.map(taintString) : [];
        removed = applied ? applied.removed.map(taintString) : [];
        if (applied) {
          cur.spec = { ...cur.spec, taints: applied.taints };
          changed = true;
        }
        return changed ? cur : undefined;
      }, { first: c });
      if (!r.obj) return done();
      c = r.obj;
      if (c.metadata.deletionTimestamp) return removeCluster(d, c);
      if (r.written && (added.length || removed.length)) {
        log.info({ cluster: name, added, removed }, "cluster taints updated");
        await d.events.normal(c, EventReasonTaintClusterSucceed, taintMessage(added, removed));
      }

      const plan = taintPlanFor(c, d, now);
      if (plan.recheckAt !== undefined) recheckAt = recheckAt === undefined ? plan.recheckAt : Math.min(recheckAt, plan.recheckAt);
      return recheckAt === undefined ? done() : after(Math.max(1, recheckAt - d.now().getTime()));
    },
  };
}

/** The renewTime of the Lease karmada-cluster/<cluster> a Pull cluster's agent renews; undefined without one. */
async function leaseRenewTime(d: ControllerDeps, cluster: string): Promise<string | undefined> {
  const lease = await d.store.get<KubeObject & { spec?: { renewTime?: unknown } }>({ gk: GK.lease, namespace: ClusterLeaseNamespace, name: cluster });
  const t = lease?.spec?.renewTime;
  return typeof t === "string" && t ? t : undefined;
}

function taintMessage(added: string[], removed: string[]): string {
  const parts: string[] = [];
  if (added.length) parts.push(`added taint${added.length > 1 ? "s" : ""} ${added.join(", ")}`);
  if (removed.length) parts.push(`removed taint${removed.length > 1 ? "s" : ""} ${removed.join(", ")}`);
  const s = parts.join("; ");
  return s.charAt(0).toUpperCase() + s.slice(1);
}

async function bindingsWith(d: ControllerDeps, index: string): Promise<AnyResourceBinding[]> {
  const [rbs, crbs] = await Promise.all([
    d.store.list<AnyResourceBinding>(GK.resourceBinding, { index }),
    d.store.list<AnyResourceBinding>(GK.clusterResourceBinding, { index }),
  ]);
  return [...rbs.items, ...crbs.items];
}

/** Deletion of a cluster (Karmada's removeCluster plus the execution-space cleanup). */
async function removeCluster(d: ControllerDeps, c: Cluster): Promise<Result> {
  const name = c.metadata.name!;
  const ref = { gk: GK.cluster, namespace: "", name };
  const now = d.now().getTime();
  const t = await d.store.mutateWritten<Cluster>(ref, (cur) => {
    const applied = applyTaintPlan(cur.spec?.taints, { add: [TerminatingNoExecute], remove: [] }, now);
    if (!applied) return undefined;
    cur.spec = { ...cur.spec, taints: applied.taints };
    return cur;
  }, { first: c });
  if (!t.obj) return done();
  c = t.obj;
  if (t.written) {
    d.log.info({ cluster: name }, "cluster is being deleted; terminating taint added");
    await d.events.normal(c, EventReasonTaintClusterSucceed, taintMessage([taintString(TerminatingNoExecute)], []));
  }
  if (!(c.metadata.finalizers ?? []).includes(ClusterControllerFinalizer)) return done();

  const retry = after(d.cfg.CLUSTER_CLEANUP_RETRY_FREQUENCY);
  const scheduled = await bindingsWith(d, bindingClusterIndex(name));
  const evicting = await bindingsWith(d, bindingEvictingIndex(name));
  if (scheduled.length || evicting.length) {
    d.log.debug({ cluster: name, scheduled: scheduled.length, evicting: evicting.length }, "cluster deletion waits for its bindings");
    return retry;
  }

  const works = await d.store.list<KubeObject>(GK.work, { namespace: executionNamespace(name) });
  if (works.items.length) {
    for (const w of works.items) {
      if (w.metadata.deletionTimestamp) continue;
      try {
        await d.store.delete({ gk: GK.work, namespace: w.metadata.namespace ?? "", name: w.metadata.name ?? "" });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    return retry;
  }

  await d.store.mutateWritten<Cluster>(ref, (cur) => {
    const f = cur.metadata.finalizers ?? [];
    if (!f.includes(ClusterControllerFinalizer)) return undefined;
    cur.metadata.finalizers = f.filter((x) => x !== ClusterControllerFinalizer);
    return cur;
  }, { first: c });
  d.log.info({ cluster: name }, "cluster removed");
  return done();
}
