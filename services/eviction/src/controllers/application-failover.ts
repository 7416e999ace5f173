import { bindingsIn } from "@flotilla/store";
import { BadRequestError, gracefulEvictCluster } from "@flotilla/api";
import { after, done, terminal, type Reconciler } from "@flotilla/runtime";
import {
  CRBApplicationFailoverProducer,
  RBApplicationFailoverProducer,
  UnhealthySinceAnnotation,
  decideApplicationFailover,
  formatUnhealthySince,
  parseUnhealthySince,
} from "../logic/application-failover.js";
import type { Deps as GracefulEvictionDeps } from "./graceful-eviction.js";
import { rfc3339 } from "@flotilla/api";

export const name = "application-failover";

/** Upstream's event reasons for an eviction (helper.EmitClusterEvictionEventForResourceBinding). */
export const EventReasonEvictWorkloadSucceed = "EvictWorkloadFromClusterSucceed";
export const EventReasonEvictWorkloadFailed = "EvictWorkloadFromClusterFailed";

/** What the graceful-eviction controller is built from, but the cluster reader. */
export type Deps = Omit<GracefulEvictionDeps, "clusters">;

/**
 * The application failover controller (key = `rb/<ns>/<name>` or `crb/<name>`), upstream's
 * (C)RBApplicationFailoverController: reads the binding, decides (decideApplicationFailover),
 * and writes in one update, with the resourceVersion read, the evictions (GracefulEvictCluster
 * with reason ApplicationFailure; the scheduler then places the workload elsewhere, the
 * evicted cluster excluded, and the binding controller carries the preserved state to the new
 * copy) and the record of when each cluster turned Unhealthy (an annotation, so the toleration
 * survives restarts; upstream keeps it in memory). A conflict reads and decides again at once.
 * Comes back through a durable timer when a toleration ends.
 */
export function applicationFailover(d: Deps): Reconciler<string> {
  const bindings = bindingsIn(d.store);
  return {
    name,
    async reconcile(key, { log }) {
      if (!bindings.ref(key)) terminal(new BadRequestError(`invalid key ${JSON.stringify(key)}`));
      if (!d.cfg.APPLICATION_FAILOVER) return done();
      // decided again on every attempt: what it leaves here describes the attempt that counts
      let dec: ReturnType<typeof decideApplicationFailover> | undefined;
      let evicted: ReturnType<typeof decideApplicationFailover>["evict"] = [];
      const r = await bindings.mutate(key, (next) => {
        dec = undefined;
        evicted = [];
        if (next.metadata.deletionTimestamp) return undefined;
        const recorded = next.metadata.annotations?.[UnhealthySinceAnnotation];
        const now = d.now().getTime();
        dec = decideApplicationFailover({
          spec: next.spec,
          status: next.status,
          since: parseUnhealthySince(recorded),
          statefulInjection: d.cfg.STATEFUL_FAILOVER_INJECTION,
          producer: next.kind === "ClusterResourceBinding" ? CRBApplicationFailoverProducer : RBApplicationFailoverProducer,
          now,
        });
        next.spec ??= {};
        evicted = dec.evict.filter((e) => gracefulEvictCluster(next.spec!, e.cluster, { ...e.options, creationTimestamp: rfc3339(now) }));
        const record = formatUnhealthySince(dec.since);
        const annotations = { ...next.metadata.annotations };
        if (record) annotations[UnhealthySinceAnnotation] = record;
        else delete annotations[UnhealthySinceAnnotation];
        next.metadata.annotations = annotations;
        if (Object.keys(annotations).length === 0) delete next.metadata.annotations;
        return evicted.length || record !== recorded ? next : undefined;
      });
      const stored = r.obj;
      if (!stored || !dec) return done();
      const decided = dec as ReturnType<typeof decideApplicationFailover>;
      for (const e of evicted) {
        log.info({ binding: key, kind: stored.kind, cluster: e.cluster, purgeMode: e.options.purgeMode, preserved: Object.keys(e.options.preservedLabelState ?? {}) }, "evicted unhealthy application from cluster");
        await d.events.normal(stored, EventReasonEvictWorkloadSucceed, `Evicted from cluster ${e.cluster}: ${e.options.message}; graceful-eviction task added (purgeMode ${e.options.purgeMode})`);
      }
      for (const f of decided.failed) {
        log.warn({ binding: key, cluster: f.cluster, problem: f.message }, "application failover cannot evict yet");
        await d.events.warning(stored, EventReasonEvictWorkloadFailed, `Cannot evict from cluster ${f.cluster} yet: ${f.message}`);
      }
      return decided.retryMs === undefined ? done() : after(decided.retryMs);
    },
  };
}
