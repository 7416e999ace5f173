import { GK, type Cluster, type ClusterTaintPolicy } from "@flotilla/api";
import { done, type Reconciler } from "@flotilla/runtime";
import { PolicyTaintsAnnotation, applyTaintPolicies, taintsMessage, writePolicyTaints, type TaintPolicyOutcome } from "../logic/taint-policies.js";
import { taintString } from "../logic/taints.js";
import { EventReasonTaintClusterSucceed } from "./cluster.js";
import type { ControllerDeps } from "./deps.js";


/** Upstream's controller name, in logs, metrics and the wake-up consumers. */
export const TAINT_POLICY_CONTROLLER = "cluster-taint-policy-controller";

/**
 * Karmada's cluster-taint-policy-controller (key = cluster name): every ClusterTaintPolicy
 * applied to the cluster's status conditions (applyTaintPolicies), and the taints and the record
 * of the policies' taints (annotation cluster.flotilla.io/policy-taints) written together, with
 * the resourceVersion read. Woken by any change of the cluster and by any change of a policy
 * (fanned out to every cluster); level-triggered, so a policy's taint that someone removes while
 * its addOnConditions still match comes back at the next pass (upstream waits for the next
 * condition or policy change).
 */
export function taintPolicyController(d: ControllerDeps): Reconciler<string> {
  return {
    name: TAINT_POLICY_CONTROLLER,
    async reconcile(name, { log }) {
      const ref = { gk: GK.cluster, namespace: "", name };
      const c = await d.store.get<Cluster>(ref);
      if (!c) return done();
      const policies = (await d.store.list<ClusterTaintPolicy>(GK.clusterTaintPolicy)).items;
      const now = d.now().getTime();
      let out: TaintPolicyOutcome | undefined;
      const r = await d.store.mutateWritten<Cluster>(ref, (cur) => {
        out = applyTaintPolicies(cur, policies, now);
        if (!out.changed) return undefined;
        cur.spec = { ...cur.spec, taints: out.taints };
        const annotations = { ...cur.metadata.annotations };
        const record = writePolicyTaints(out.records);
        if (record === undefined) delete annotations[PolicyTaintsAnnotation];
        else annotations[PolicyTaintsAnnotation] = record;
        cur.metadata.annotations = annotations;
        return cur;
      }, { first: c });
      if (!r.written || !r.obj || !out) return done();
      const added = out.added.map((a) => `${taintString(a.taint)} (${a.policy})`);
      const removed = out.removed.map((a) => `${taintString(a.taint)} (${a.policy})`);
      if (added.length || removed.length) {
        log.info({ cluster: name, added, removed }, "cluster taints updated by cluster taint policies");
        await d.events.normal(r.obj, EventReasonTaintClusterSucceed, taintsMessage(name, r.obj.spec?.taints ?? []));
      } else {
        log.debug({ cluster: name }, "stale records of policy taints dropped");
      }
      return done();
    },
  };
}
