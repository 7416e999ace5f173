import { isDeepStrictEqual } from "node:util";
import { BadRequestError, PolicyPlacementAnnotation, bindingRefOfKey, isConflict, microTime, parseTime, type AnyResourceBinding, type Cluster, type KubeObject } from "@flotilla/api";
import { after, done, retry, terminal, type ReconcileContext, type Reconciler, type Result, type SeenVersions } from "@flotilla/runtime";
import { isResponsibleFor, needsSchedule, schedule } from "@flotilla/scheduling";
import type { ObjectRef } from "@flotilla/store";
import { bindingLoad, capacityInputs, type AssumedLedger } from "../logic/assumed.js";
import type { EstimatorAnswer } from "../logic/estimates.js";
import { UpdatePendingSinceAnnotation, debounceUpdate } from "../logic/debounce.js";
import { SCHEDULED, observedOnly, sameOutcome, statusAfter, withScheduleResult, type Trigger } from "../logic/status.js";
import type { SchedulerMetrics } from "./metrics.js";
import type { BindingTracker } from "./tracker.js";

export const name = "scheduler";

/** An Unschedulable binding whose clusters or ledger changed while it was decided is tried again this soon. */
export const RETRY_SOON_MS = 50;


/** The store operations the scheduler uses (narrow, so tests can interpose on writes). */
export interface BindingStore {
  get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined>;
  updateStatus<T extends KubeObject>(obj: T): Promise<T>;
  updateWithStatus<T extends KubeObject>(obj: T): Promise<T>;
}

export interface SchedulerSettings {
  schedulerName: string;
  /** Enabled plugins, e.g. `*` or `*,-ClusterLocality`. */
  plugins: string;
  /** Feasible clusters listed in `status.schedulingDiagnosis`. */
  maxFeasible: number;
  /** An Unschedulable binding is retried after this even when no cluster changes. */
  unschedulableRetryMs: number;
  /** SchedulerError retries: exponential from `retryBaseMs` up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Conflicts in a row before the reconcile gives up and the runner backs off. */
  maxConflicts: number;
  /**
   * An update of a placed binding's replicas or placement waits this long after it was first seen,
   * so that one written in two steps is scheduled once (see debounceUpdate); failover is never
   * delayed. Absent or 0: off.
   */
  bindingUpdateDebounceMs?: number;
}

export interface SchedulerDeps {
  store: BindingStore;
  clusters: {
    snapshot(): readonly Cluster[];
    /** The snapshot from a list started at or after `since` (performance.now()). */
    snapshotSince?(since: number): Promise<readonly Cluster[]>;
  };
  estimates: { forBinding(b: AnyResourceBinding): Promise<EstimatorAnswer | undefined> };
  /** Load assigned to clusters that their members have not reported yet (see AssumedLedger); absent: none counted. */
  ledger?: AssumedLedger;
  tracker: BindingTracker;
  /** The binding versions a decision was made on (their wake-ups need no reconcile). */
  seen: SeenVersions;
  metrics: SchedulerMetrics;
  settings: SchedulerSettings;
  clock?: () => Date;
}

/** Why the binding needs scheduling now, or undefined (only the observed generation is due). */
export function triggerFor(binding: AnyResourceBinding, clusters: readonly Cluster[], known: (name: string) => boolean): Trigger | undefined | { error: string } {
  const d = needsSchedule(binding, clusters);
  if (d.schedule) return d.trigger;
  if (d.error) return { error: d.error };
  // a target cluster that no longer exists at all (deleted without going through "deleting"
  // while the scheduler watched) is treated like a deleting one
  if ((binding.spec?.clusters ?? []).some((t) => t.name && !known(t.name))) return "targetClusterGone";
  // placed (annotation and clusters written) but no decision recorded: the process stopped
  // between its two writes; scheduling again is idempotent and records it
  if (binding.metadata.annotations?.[PolicyPlacementAnnotation] && !binding.status?.conditions?.some((c) => c.type === SCHEDULED)) return "statusMissing";
  return undefined;
}

const nameSets = new WeakMap<readonly Cluster[], Set<string>>();
/** The names in a snapshot (cached per snapshot array: it is replaced, never changed). */
function namesOf(clusters: readonly Cluster[]): Set<string> {
  let s = nameSets.get(clusters);
  if (!s) nameSets.set(clusters, (s = new Set(clusters.map((c) => c.metadata.name ?? ""))));
  return s;
}

/**
 * The scheduling controller for ResourceBindings and ClusterResourceBindings (one code path; the
 * key tells the kind). Each pass re-reads the binding, decides whether to schedule (Karmada's
 * triggers), runs `schedule()` on the cluster snapshot, and writes `spec.clusters`, the
 * applied-placement annotation and the status together, with the resourceVersion it read. A
 * conflict means somebody else wrote in between: the pass starts over from a fresh read, so
 * their change is kept and the decision is made again on top of it.
 */
export function bindingScheduler(d: SchedulerDeps): Reconciler<string> {
  const clock = d.clock ?? (() => new Date());
  const s = d.settings;
  /** The binding without the debounce's record (undefined when it has none). */
  const withoutPending = <T extends AnyResourceBinding>(b: T): T | undefined => {
    if (b.metadata.annotations?.[UpdatePendingSinceAnnotation] === undefined) return undefined;
    const annotations = { ...b.metadata.annotations };
    delete annotations[UpdatePendingSinceAnnotation];
    return { ...b, metadata: { ...b.metadata, annotations } };
  };

  async function pass(key: string, ctx: ReconcileContext): Promise<Result> {
    const ref = bindingRefOfKey(key);
    if (!ref) terminal(new BadRequestError(`malformed binding key ${JSON.stringify(key)}`));
    const readAt = performance.now();
    const rb = await d.store.get<AnyResourceBinding>(ref);
    if (!rb || rb.metadata.deletionTimestamp) {
      d.tracker.unpark(key);
      d.seen.forget(key);
      return done();
    }
    ctx.observed(rb.metadata.resourceVersion);
    if (!isResponsibleFor(rb, s.schedulerName)) {
      d.tracker.unpark(key);
      d.seen.reconciled(key, rb.metadata.resourceVersion, rb.metadata.generation);
      return done();
    }
    let clusters = d.clusters.snapshot();
    const names = namesOf(clusters);
    const trigger = triggerFor(rb, clusters, (n) => names.has(n));
    if (trigger === undefined || typeof trigger === "object") {
      if (typeof trigger === "object") {
        // Karmada retries this forever; nothing but a change of the binding can fix it
        terminal(new Error(trigger.error));
      }
      d.metrics.trigger("none");
      const status = observedOnly(rb);
      let rv = rb.metadata.resourceVersion;
      // an update that waited and was taken back before the wait ended: its record goes
      const cleared = withoutPending(rb);
      if (cleared) {
        rv = (await d.store.updateWithStatus({ ...cleared, ...(status ? { status } : {}) })).metadata.resourceVersion;
        if (status) d.metrics.writes.status++;
      } else if (status) {
        rv = (await d.store.updateStatus({ ...rb, status })).metadata.resourceVersion;
        d.metrics.writes.status++;
      }
      d.tracker.unpark(key);
      d.seen.reconciled(key, rv, rb.metadata.generation);
      return done();
    }

    const since = parseTime(rb.metadata.annotations?.[UpdatePendingSinceAnnotation]);
    const wait = debounceUpdate({ binding: rb, trigger, clusters, since, now: clock().getTime(), debounceMs: s.bindingUpdateDebounceMs ?? 0 });
    if (wait.wait) {
      // nothing decided: the versions seen stay undecided, so the update's next step (and any
      // failover) wakes the binding up again; the durable timer brings it back when the wait is
      // over. When the wait began is kept on the binding: every replica, and this one after a
      // restart, counts from the same moment.
      if (since === undefined) {
        ctx.log.debug({ trigger, waitMs: wait.ms }, "binding update waits out the debounce");
        await d.store.updateWithStatus({ ...rb, metadata: { ...rb.metadata, annotations: { ...rb.metadata.annotations, [UpdatePendingSinceAnnotation]: microTime(wait.since) } } });
      }
      d.metrics.debounced++;
      return after(wait.ms);
    }

    d.metrics.trigger(trigger);
    // a cluster change (or load the ledger lets go) from here on retries the binding if parked
    const epoch = d.tracker.epoch;
    const answer = await d.estimates.forBinding(rb);
    // from reading the clusters and the ledger to counting this decision in it, nothing else runs
    // (no await): every decision sees the load of the ones before it, and the ledger lets go of
    // reported replicas against the capacity reports of the very snapshot it decides on
    const decide = (snapshot: readonly Cluster[]) => {
      clusters = snapshot;
      const t0 = performance.now();
      const { assumed, estimates } = capacityInputs(d.ledger, snapshot, answer, Date.now());
      const r = schedule({ binding: rb, clusters: snapshot, estimates, assumed, enabled: s.plugins });
      d.metrics.observeAlgorithm(performance.now() - t0);
      return r;
    };
    let result = decide(d.clusters.snapshot());
    const fresh = result.error?.kind === "FitError" ? await d.clusters.snapshotSince?.(readAt) : undefined;
    if (fresh && fresh !== clusters) {
      // nothing fit: make sure that is not because the snapshot missed a cluster just joined
      result = decide(fresh);
    }
    d.metrics.results[result.condition.reason] = (d.metrics.results[result.condition.reason] ?? 0) + 1;

    let cur = rb;
    const opts = { trigger, now: clock(), clustersTotal: clusters.length, maxFeasible: s.maxFeasible };
    const scheduled = withScheduleResult(rb, result);
    // a decision made: the debounce's record (when an update began to wait) goes with it
    const withClusters = scheduled ? (withoutPending(scheduled) ?? scheduled) : withoutPending(rb);
    if (withClusters) {
      // placement and status in one write: nobody sees the one without the other
      const generation = (rb.metadata.generation ?? 1) + (isDeepStrictEqual(withClusters.spec, rb.spec) ? 0 : 1);
      const status = statusAfter({ ...withClusters, metadata: { ...withClusters.metadata, generation } }, result, opts);
      const undo = d.ledger?.assume(key, rb.metadata.resourceVersion, bindingLoad(withClusters), Date.now());
      try {
        cur = await d.store.updateWithStatus({ ...withClusters, status });
      } catch (e) {
        undo?.();
        throw e;
      }
      d.metrics.writes.spec++;
      ctx.log.info({ trigger, clusters: result.clusters, result: result.condition.reason }, "scheduled binding");
    } else {
      const status = statusAfter(cur, result, opts);
      const repeat = trigger === "alwaysSchedule" || result.condition.status !== "True";
      if (!repeat || !sameOutcome(cur.status, status)) {
        cur = await d.store.updateStatus({ ...cur, status });
        d.metrics.writes.status++;
        if (result.error) ctx.log.info({ trigger, result: result.condition.reason, message: result.condition.message }, "binding not scheduled");
      }
    }
    // every write above was made with the version read: it and all before it are decided on
    d.seen.reconciled(key, cur.metadata.resourceVersion, cur.metadata.generation);

    switch (result.error?.requeue) {
      case "unschedulable":
        // a change that came while deciding may be what lets it fit: retried at once, not parked
        return d.tracker.park(key, epoch) ? after(s.unschedulableRetryMs) : after(RETRY_SOON_MS);
      case "backoff":
        // a durable timer rather than a throw: the wake-up is acked, a binding that keeps failing
        // does not hold a consumer slot while it waits, and the count of failures in a row is
        // kept with the timer (every replica, and this one after a restart, continues it)
        d.tracker.unpark(key);
        return retry(s.retryBaseMs, s.retryMaxMs);
      default:
        d.tracker.unpark(key);
        return done();
    }
  }

  return {
    name,
    async reconcile(key, ctx) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await pass(key, ctx);
        } catch (e) {
          if (!isConflict(e) || attempt >= s.maxConflicts) throw e;
          d.metrics.conflicts++;
          ctx.log.debug({ attempt }, "binding changed while scheduling; re-reading");
        }
      }
    },
  };
}
