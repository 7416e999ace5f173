import { BadRequestError, PlacementBeforeFailoverAnnotation, moveBackOf, placementText, rfc3339, type Cluster } from "@flotilla/api";
import { after, done, terminal, type Reconciler, type Result } from "@flotilla/runtime";
import { gracefulEvictCluster, purgeModeFor, removeCluster } from "../logic/evict.js";
import { taintString } from "../logic/taints.js";
import { evictionDecision, type EvictionDecision } from "@flotilla/scheduling";
import type { ControllerDeps } from "./deps.js";
import { parseEvictionKey } from "./keys.js";
import { bindingsIn, type ClusterReader } from "@flotilla/store";
import type { EvictionPacer } from "./pacer.js";

export const BINDING_EVICTION_CONTROLLER = "binding-eviction";

export const EventReasonEvictCluster = "EvictCluster";

/** Waited this long for a pacing token: look at the cluster again before acting on what was read. */
const STALE_AFTER_WAIT_MS = 100;

function evictionMessage(dec: Extract<EvictionDecision, { kind: "evict" }>): string {
  return dec.expired ? `toleration of taint {${taintString(dec.taint)}} expired` : `taint {${taintString(dec.taint)}} is not tolerated`;
}

/**
 * The NoExecute taint manager's binding side (key = `<cluster>/<binding key>`): reads the
 * cluster (a shared read at most CLUSTER_READ_TTL old, see ClusterReader) and the binding,
 * decides again, and evicts: with GRACEFUL_EVICTION upstream's GracefulEvictCluster (the
 * cluster leaves spec.clusters into a graceful-eviction task), else a plain removal. Each
 * eviction waits for its turn at the pacer (a turn not used is given back). The write goes
 * through the store's read-decide-write (`mutateWritten`): on a conflict (the scheduler, the
 * graceful-eviction controller) the binding is read and judged again at once, so no concurrent
 * change is lost and conflicts never wait out a backoff. A toleration still running comes back
 * (durably) when it ends.
 */
export function bindingEvictionController(
  d: ControllerDeps & { pacer: EvictionPacer; clusters: ClusterReader; /** Told of each eviction written (for the metrics). */ onEvicted?: (graceful: boolean) => void },
): Reconciler<string> {
  return {
    name: BINDING_EVICTION_CONTROLLER,
    async reconcile(key, { log, signal }) {
      const k = parseEvictionKey(key);
      if (!k) terminal(new BadRequestError(`invalid key ${JSON.stringify(key)}`));
      if (!d.cfg.FAILOVER) return done();
      const first = await d.clusters.get(k.cluster);
      if (!first) return done();
      let cluster: Cluster = first;
      const graceful = d.cfg.GRACEFUL_EVICTION;
      let paced = false;
      /** What the attempt written decided (or, when nothing was written, when to look again). */
      let outcome: Result = done();
      let evicted: { purgeMode: string; reason: string } | undefined;
      const { obj: stored, written } = await bindingsIn(d.store).mutate(k.binding, async (b) => {
        outcome = done();
        evicted = undefined;
        for (;;) {
          if (b.metadata.deletionTimestamp || !(b.spec?.clusters ?? []).some((c) => c.name === k.cluster)) return undefined;
          const dec = evictionDecision(cluster.spec?.taints, b.spec?.placement?.clusterTolerations, d.now().getTime());
          if (dec.kind !== "evict") {
            if (dec.kind === "wait") outcome = after(Math.max(1, dec.at - d.now().getTime()));
            return undefined;
          }
          if (!paced) {
            const waited = await d.pacer.acquire(signal);
            paced = true;
            // waited for the turn: look at the cluster again before acting on what was read
            if (waited > STALE_AFTER_WAIT_MS) {
              d.clusters.invalidate(k.cluster);
              const fresh = await d.clusters.get(k.cluster);
              if (!fresh) return undefined;
              cluster = fresh;
              continue;
            }
          }
          const purgeMode = purgeModeFor(b.spec ?? {}, d.cfg.NO_EXECUTE_TAINT_EVICTION_PURGE_MODE);
          const reason = evictionMessage(dec);
          const before = b.spec?.clusters;
          const next = structuredClone(b);
          next.spec ??= {};
          const changed = graceful
            ? gracefulEvictCluster(next.spec, k.cluster, { purgeMode, message: reason, creationTimestamp: rfc3339(d.now().getTime()) })
            : removeCluster(next.spec, k.cluster);
          if (!changed) return undefined;
          // move-back (opt-in): the placement before the first eviction, for the way back
          if (moveBackOf(b.metadata.annotations) && b.metadata.annotations?.[PlacementBeforeFailoverAnnotation] === undefined) {
            next.metadata.annotations = { ...next.metadata.annotations, [PlacementBeforeFailoverAnnotation]: placementText(before) };
          }
          evicted = { purgeMode, reason };
          return next;
        }
      });
      if (!written || !stored || !evicted) {
        if (paced) d.pacer.giveBack();
        return outcome;
      }
      const { purgeMode, reason } = evicted;
      d.onEvicted?.(graceful);
      const how = graceful ? `graceful-eviction task added (purgeMode ${purgeMode})` : "removed at once (graceful eviction off)";
      log.info({ binding: k.binding, kind: stored.kind, cluster: k.cluster, graceful, purgeMode, reason }, "evicted cluster from binding");
      await d.events.normal(stored, EventReasonEvictCluster, `Evicted from cluster ${k.cluster}: ${reason}; ${how}`);
      return done();
    },
  };
}
