import { isDeepStrictEqual } from "node:util";
import type { AnyResourceBinding, Cluster } from "@flotilla/api";
import { bindingAffectedByCluster, clusterChangeMatters, isDeleting, isResponsibleFor } from "@flotilla/scheduling";

/**
 * Whether a cluster change can let a parked (Unschedulable) binding fit now: a new cluster, a
 * spec or label change (taints, affinity fields), or a change of capacity or API enablements.
 * Heartbeats alone (the Ready condition re-stamped by every probe) cannot.
 */
export function mayUnpark(before: Cluster | undefined, after: Cluster | undefined): boolean {
  if (!after) return false;
  if (!before) return true;
  if (clusterChangeMatters(before, after)) return true;
  if ((before.metadata.generation ?? 0) !== (after.metadata.generation ?? 0)) return true;
  return (
    !isDeepStrictEqual(before.status?.resourceSummary, after.status?.resourceSummary) ||
    !isDeepStrictEqual(before.status?.apiEnablements, after.status?.apiEnablements)
  );
}

/**
 * Whether a cluster change is one the scheduler reacts to by re-scheduling bindings (§3.1): its
 * labels or generation changed, its deletion started, or it is gone. A new cluster alone is not.
 */
export function clusterChangeFansOut(before: Cluster | undefined, after: Cluster | undefined): boolean {
  if (!before) return false;
  if (!after) return true;
  return clusterChangeMatters(before, after);
}

/**
 * Whether the binding is one a cluster change should re-schedule: a binding this scheduler is
 * responsible for (and not deleting) that targets the cluster (it is gone or going), or whose
 * current affinity matches the cluster before or after the change, or that has no affinity or
 * an affinity list not yet observed.
 */
export function affectedBy(binding: AnyResourceBinding, name: string, before: Cluster | undefined, after: Cluster | undefined, schedulerName: string): boolean {
  if (isDeleting(binding) || !isResponsibleFor(binding, schedulerName)) return false;
  if ((binding.spec?.clusters ?? []).some((t) => t.name === name)) return true;
  if (!after) return false;
  return bindingAffectedByCluster(binding, ...(before ? [before, after] : [after]));
}
