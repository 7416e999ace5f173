import { after, done, type Reconciler } from "@flotilla/runtime";
import { bindingClusterIndex, bindingsIn, clustersIn } from "@flotilla/store";
import { NO_EXECUTE } from "../logic/taints.js";
import { evictionDecision } from "@flotilla/scheduling";
import type { ControllerDeps } from "./deps.js";
import { evictionKey } from "./keys.js";

export const TAINT_MANAGER_CONTROLLER = "taint-manager";

/**
 * The NoExecute taint manager's cluster side (key = cluster name): for a cluster with
 * NoExecute taints, every ResourceBinding and ClusterResourceBinding listing it in
 * `spec.clusters` (one index query each) is judged against its `placement.clusterTolerations`;
 * those to evict now go to the binding-eviction controller, and the cluster comes back (a
 * durable timer) when the earliest toleration runs out, or after
 * CLUSTER_TAINT_EVICTION_RETRY_FREQUENCY at the latest to pick up new bindings. Wake-ups that
 * leave the NoExecute taints as they were (heartbeats) do not reach it (`noExecuteSignature`).
 */
export function taintManagerController(d: ControllerDeps & { evict: (key: string) => void }): Reconciler<string> {
  return {
    name: TAINT_MANAGER_CONTROLLER,
    async reconcile(name, { log }) {
      if (!d.cfg.FAILOVER) return done();
      const c = await clustersIn(d.store).get(name);
      if (!c) return done();
      const taints = c.spec?.taints ?? [];
      if (!taints.some((t) => t.effect === NO_EXECUTE)) return done();
      const index = bindingClusterIndex(name);
      const bindings = await bindingsIn(d.store).list({ index });
      const now = d.now().getTime();
      let due = 0;
      let waiting = 0;
      let nextAt = Infinity;
      for (const b of bindings) {
        if (b.metadata.deletionTimestamp) continue;
        if (!(b.spec?.clusters ?? []).some((t) => t.name === name)) continue;
        const dec = evictionDecision(taints, b.spec?.placement?.clusterTolerations, now);
        if (dec.kind === "evict") {
          d.evict(evictionKey(name, b));
          due++;
        } else if (dec.kind === "wait") {
          waiting++;
          nextAt = Math.min(nextAt, dec.at);
        }
      }
      if (due || waiting) log.debug({ cluster: name, due, waiting }, "bindings on a NoExecute cluster");
      return after(Math.max(1, Math.min(nextAt - d.now().getTime(), d.cfg.CLUSTER_TAINT_EVICTION_RETRY_FREQUENCY)));
    },
  };
}

