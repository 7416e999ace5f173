import { PlacementBeforeFailoverAnnotation, isConflict, isNotFound, moveBackOf, placementText, type AnyResourceBinding } from "@flotilla/api";
import { after, done, terminal, type Reconciler } from "@flotilla/runtime";
import { gracefulEvictCluster, purgeModeFor, removeCluster } from "../logic/evict.js";
import { taintString } from "../logic/taints.js";
import { evictionDecision, type EvictionDecision } from "@flotilla/scheduling";
import type { ControllerDeps } from "./deps.js";
import { parseEvictionKey, refString } from "./keys.js";
import type { ClusterReader } from "@flotilla/store";
import type { EvictionHints } from "./hints.js";
import type { EvictionPacer } from "./pacer.js";
import { rfc3339 } from "@flotilla/api";

export const BINDING_EVICTION_CONTROLLER = "binding-eviction";

export const EventReasonEvictCluster = "EvictCluster";

/** Waited this long for a pacing token: look at the cluster again before acting on what was read. */
const STALE_AFTER_WAIT_MS = 100;

function evictionMessage(dec: Extract<EvictionDecision, { kind: "evict" }>): string {
  return dec.expired ? `toleration of taint {${taintString(dec.taint)}} expired` : `taint {${taintString(dec.taint)}} is not tolerated`;
}

/**
 * The NoExecute taint manager's binding side (key = `<cluster>/<binding key>`): reads the
 * cluster (a shared read at most CLUSTER_READ_TTL old, see ClusterReader) and the binding (the
 * copy the taint manager just listed, else a fresh read), decides again, and evicts: with GRACEFUL_EVICTION upstream's
 * GracefulEvictCluster (the cluster leaves spec.clusters into a graceful-eviction task), else a
 * plain removal. Each eviction waits for its turn at the pacer. The write starts from the
 * binding just read and carries its resourceVersion; on a conflict (the scheduler, the
 * graceful-eviction controller) the binding is read and judged again at once, so no concurrent
 * change is lost and conflicts never wait out a backoff. A toleration still running comes back
 * (durably) when it ends.
 */
export function bindingEvictionController(
  d: ControllerDeps & { pacer: EvictionPacer; clusters: ClusterReader; hints?: EvictionHints; /** Told of each eviction written (for the metrics). */ onEvicted?: (graceful: boolean) => void },
): Reconciler<string> {
  return {
    name: BINDING_EVICTION_CONTROLLER,
    async reconcile(key, { log, signal }) {
      const k = parseEvictionKey(key);
      if (!k) terminal(new Error(`invalid key ${JSON.stringify(key)}`));
      if (!d.cfg.FAILOVER) return done();
      let cluster = await d.clusters.get(k.cluster);
      if (!cluster) return done();
      let paced = false;
      // the binding as the taint manager just listed it, if it did: the write carries its
      // resourceVersion, so a stale copy only costs a conflict and a fresh read
      let hint = d.hints?.take(key);
      for (let attempt = 1; ; attempt++) {
        const b = hint ?? (await d.store.get<AnyResourceBinding>(k.binding));
        hint = undefined;
        if (!b || b.metadata.deletionTimestamp || !(b.spec?.clusters ?? []).some((c) => c.name === k.cluster)) {
          if (paced) d.pacer.giveBack();
          return done();
        }
        const dec = evictionDecision(cluster.spec?.taints, b.spec?.placement?.clusterTolerations, d.now().getTime());
        if (dec.kind !== "evict") {
          if (paced) d.pacer.giveBack();
          return dec.kind === "wait" ? after(Math.max(1, dec.at - d.now().getTime())) : done();
        }
        if (!paced) {
          const waited = await d.pacer.acquire(signal);
          paced = true;
          if (waited > STALE_AFTER_WAIT_MS) {
            d.clusters.invalidate(k.cluster);
            const fresh = await d.clusters.get(k.cluster);
            if (!fresh) return done();
            cluster = fresh;
            continue;
          }
        }
        const graceful = d.cfg.GRACEFUL_EVICTION;
        const purgeMode = purgeModeFor(b.spec ?? {}, d.cfg.NO_EXECUTE_TAINT_EVICTION_PURGE_MODE);
        const reason = evictionMessage(dec);
        const next = structuredClone(b);
        next.spec ??= {};
        const changed = graceful
          ? gracefulEvictCluster(next.spec, k.cluster, { purgeMode, message: reason, creationTimestamp: rfc3339(d.now().getTime()) })
          : removeCluster(next.spec, k.cluster);
        if (!changed) return done();
        // move-back (opt-in): the placement before the first eviction, for the way back
        if (moveBackOf(b.metadata.annotations) && b.metadata.annotations?.[PlacementBeforeFailoverAnnotation] === undefined) {
          next.metadata.annotations = { ...next.metadata.annotations, [PlacementBeforeFailoverAnnotation]: placementText(b.spec?.clusters) };
        }
        let stored: AnyResourceBinding;
        try {
          stored = await d.store.update(next);
        } catch (e) {
          if (isNotFound(e)) return done();
          if (isConflict(e) && attempt < 10) continue;
          throw e;
        }
        d.onEvicted?.(graceful);
        const how = graceful ? `graceful-eviction task added (purgeMode ${purgeMode})` : "removed at once (graceful eviction off)";
        log.info({ binding: refString(k.binding), kind: b.kind, cluster: k.cluster, graceful, purgeMode, reason }, "evicted cluster from binding");
        await d.events.normal(stored, EventReasonEvictCluster, `Evicted from cluster ${k.cluster}: ${reason}; ${how}`);
        return done();
      }
    },
  };
}
