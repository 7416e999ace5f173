import type { Cluster, ClusterTaintPolicy, Condition, MatchCondition, Taint } from "@flotilla/api";
import { clusterMatches } from "@flotilla/scheduling";
import { sameTaint, taintString, type TaintPlan } from "./taints.js";
import { rfc3339, parseTime } from "@flotilla/api";

/**
 * The Cluster annotation that records the taints ClusterTaintPolicies added: a JSON list of
 * `{key, effect, policy, timeAdded}`, written in the same update as the taints. A taint is a
 * policy's only while the cluster carries it with that key, effect and timeAdded, so a taint a
 * user removed and set again by hand (a new timeAdded, or none) is not.
 *
 * Upstream keeps no such record: its policy controller removes any taint with the listed key and
 * effect. Flotilla records ownership so that policies never remove a taint the cluster controller
 * or a user set, and the cluster controller never removes one a policy set.
 */
export const PolicyTaintsAnnotation = "cluster.flotilla.io/policy-taints";

export interface PolicyTaintRecord {
  key: string;
  effect: string;
  /** The policy that added the taint (for people; any policy listing the taint may remove it, as upstream). */
  policy: string;
  timeAdded: string;
}

function isRecord(v: unknown): v is PolicyTaintRecord {
  if (typeof v !== "object" || v === null) return false;
  const r = v as Record<string, unknown>;
  return typeof r.key === "string" && typeof r.effect === "string" && typeof r.policy === "string" && typeof r.timeAdded === "string";
}

/** The records of a cluster's annotation; an absent or unreadable annotation records nothing. */
export function readPolicyTaints(annotations: Record<string, string> | undefined): PolicyTaintRecord[] {
  const raw = annotations?.[PolicyTaintsAnnotation];
  if (!raw) return [];
  try {
    const v: unknown = JSON.parse(raw);
    return Array.isArray(v) ? v.filter(isRecord) : [];
  } catch {
    return [];
  }
}

/** The annotation value for `records` (undefined: no annotation). */
export function writePolicyTaints(records: readonly PolicyTaintRecord[]): string | undefined {
  if (records.length === 0) return undefined;
  return JSON.stringify([...records].sort((a, b) => `${a.key}:${a.effect}`.localeCompare(`${b.key}:${b.effect}`)));
}

const sameTime = (a: string | undefined, b: string | undefined) => a !== undefined && b !== undefined && parseTime(a) !== undefined && parseTime(a) === parseTime(b);

/** Whether `r` is the record of taint `t` (same key and effect, and the timeAdded it was added with). */
function recordOf(r: PolicyTaintRecord, t: Taint): boolean {
  return sameTaint(r, t) && sameTime(r.timeAdded, t.timeAdded);
}

/** The records that still describe a taint on the cluster; the rest (taints gone or replaced) are dropped. */
export function liveRecords(taints: readonly Taint[] | undefined, records: readonly PolicyTaintRecord[]): PolicyTaintRecord[] {
  return records.filter((r) => (taints ?? []).some((t) => recordOf(r, t)));
}

/** The taints of a cluster that ClusterTaintPolicies added (per its annotation). */
export function policyOwnedTaints(cluster: Pick<Cluster, "metadata" | "spec">): Taint[] {
  const taints = cluster.spec?.taints ?? [];
  const records = readPolicyTaints(cluster.metadata.annotations);
  return taints.filter((t) => records.some((r) => recordOf(r, t)));
}

/**
 * The cluster controller's plan without the removal of any taint a ClusterTaintPolicy added: that
 * one is the policies' to remove. (What it adds is unaffected: a taint already present, whoever
 * set it, is not added again.)
 */
export function sparePolicyTaints(plan: TaintPlan, cluster: Pick<Cluster, "metadata" | "spec">): TaintPlan {
  const owned = policyOwnedTaints(cluster);
  if (owned.length === 0) return plan;
  return { ...plan, remove: plan.remove.filter((r) => !owned.some((o) => sameTaint(o, r))) };
}

/**
 * Upstream's conditionMatches: the match conditions are ANDed and an empty list never matches.
 * For each one, every cluster condition of its type is looked at in order: with In, any of them
 * whose status is listed makes it match; with NotIn, the last of them decides (matched unless its
 * status is listed). A condition type the cluster does not have never matches, even with NotIn;
 * an unknown operator makes the whole list fail.
 */
export function conditionMatches(conditions: readonly Condition[] | undefined, match: readonly MatchCondition[] | undefined): boolean {
  if (!match || match.length === 0) return false;
  for (const m of match) {
    let matched = false;
    for (const c of conditions ?? []) {
      if ((c.type ?? "") !== (m.conditionType ?? "")) continue;
      const listed = (m.statusValues ?? []).includes(c.status ?? "");
      switch (m.operator) {
        case "In":
          if (listed) matched = true;
          break;
        case "NotIn":
          matched = !listed;
          break;
        default:
          return false;
      }
    }
    if (!matched) return false;
  }
  return true;
}

/** Oldest first, as upstream; policies created in the same second go by name (upstream leaves their order open). */
export function policyOrder(a: ClusterTaintPolicy, b: ClusterTaintPolicy): number {
  const ta = parseTime(a.metadata.creationTimestamp) ?? 0;
  const tb = parseTime(b.metadata.creationTimestamp) ?? 0;
  return ta - tb || (a.metadata.name ?? "").localeCompare(b.metadata.name ?? "");
}

export interface TaintChange {
  taint: Taint;
  policy: string;
}

export interface TaintPolicyOutcome {
  taints: Taint[];
  records: PolicyTaintRecord[];
  added: TaintChange[];
  removed: TaintChange[];
  /** Whether taints or records differ from the cluster's (a write is needed). */
  changed: boolean;
}

/**
 * Every ClusterTaintPolicy applied to one cluster, as upstream's controller does it: policies
 * oldest first; a policy whose `targetClusters` is set and does not match the cluster is skipped
 * (its taints stay as they are); when all `addOnConditions` match, each listed taint the cluster
 * lacks (same key and effect) is appended with `timeAdded = now` (existing ones are left alone,
 * whoever set them); then, when all `removeOnConditions` match, each listed taint is removed —
 * only if a policy added it (the record), which is where Flotilla differs from upstream. The
 * conditions are the cluster's status conditions; deleted policies are simply absent, so
 * deleting a policy removes nothing.
 */
export function applyTaintPolicies(cluster: Pick<Cluster, "metadata" | "spec" | "status">, policies: readonly ClusterTaintPolicy[], now: number): TaintPolicyOutcome {
  const before = cluster.spec?.taints ?? [];
  let taints = [...before];
  let records = liveRecords(taints, readPolicyTaints(cluster.metadata.annotations));
  const added: TaintChange[] = [];
  const removed: TaintChange[] = [];
  const conditions = cluster.status?.conditions;

  for (const p of [...policies].sort(policyOrder)) {
    const spec = p.spec ?? {};
    const name = p.metadata.name ?? "";
    if (spec.targetClusters && !clusterMatches(cluster as Cluster, spec.targetClusters)) continue;

    if (conditionMatches(conditions, spec.addOnConditions)) {
      for (const want of spec.taints ?? []) {
        if (taints.some((t) => sameTaint(t, want))) continue;
        const t: Taint = { key: want.key ?? "", ...(want.value ? { value: want.value } : {}), effect: want.effect ?? "", timeAdded: rfc3339(now) };
        taints.push(t);
        records.push({ key: t.key ?? "", effect: t.effect ?? "", policy: name, timeAdded: t.timeAdded! });
        added.push({ taint: t, policy: name });
      }
    }

    if (conditionMatches(conditions, spec.removeOnConditions)) {
      for (const want of spec.taints ?? []) {
        const t = taints.find((x) => sameTaint(x, want));
        if (!t) continue;
        const rec = records.find((r) => recordOf(r, t));
        if (!rec) continue; // the cluster controller's or a user's: never a policy's to remove
        taints = taints.filter((x) => x !== t);
        records = records.filter((r) => r !== rec);
        const i = added.findIndex((a) => a.taint === t);
        if (i >= 0) added.splice(i, 1);
        else removed.push({ taint: t, policy: name });
      }
    }
  }

  const changed = taints.length !== before.length || taints.some((t, i) => t !== before[i]) || writePolicyTaints(records) !== cluster.metadata.annotations?.[PolicyTaintsAnnotation];
  return { taints, records, added, removed, changed };
}

/** Upstream's event message: "Update Cluster(member1) with taints(k=v:NoSchedule,…) succeed". */
export function taintsMessage(cluster: string, taints: readonly Taint[]): string {
  return `Update Cluster(${cluster}) with taints(${taints.map(taintString).join(",")}) succeed`;
}
