import type { SchedulingDiagnosisJson } from "@flotilla/proto";
import type { ScheduleResult } from "@flotilla/scheduling";

export type SchedulingDiagnosis = SchedulingDiagnosisJson;

export interface DiagnosisOptions {
  trigger: string;
  /** RFC 3339, second precision. */
  time: string;
  /** Clusters in the snapshot (deleting ones included). */
  clustersTotal: number;
  /** Feasible clusters listed beyond the selected ones (best first); the rest are counted. */
  maxFeasible: number;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The readable record of one decision, stored as `status.schedulingDiagnosis`: every rejected
 * cluster under the plugin and reason that rejected it, and the feasible clusters in selection
 * order with their score, capacity, whether they were selected and the replicas they got.
 */
export function buildDiagnosis(result: ScheduleResult, o: DiagnosisOptions): SchedulingDiagnosis {
  // keys follow the snapshot, which is sorted by name
  const groups = new Map<string, { plugin: string; reason: string; clusters: string[] }>();
  for (const name in result.diagnosis) {
    for (const r of result.diagnosis[name]) {
      const k = `${r.plugin}\u0000${r.reason}`;
      let g = groups.get(k);
      if (!g) groups.set(k, (g = { plugin: r.plugin, reason: r.reason, clusters: [] }));
      if (g.clusters[g.clusters.length - 1] !== name) g.clusters.push(name);
    }
  }
  const rejected = [...groups.values()].sort((a, b) => cmp(a.plugin, b.plugin) || cmp(a.reason, b.reason));
  for (const g of rejected) g.clusters.sort(cmp);

  const assigned = new Map<string, number>();
  for (const t of result.clusters) if (t.name) assigned.set(t.name, t.replicas ?? 0);
  // the best `maxFeasible` in selection order, and every selected cluster wherever it ranks
  const listed = result.scores.filter((e, i) => i < o.maxFeasible || e.selected);
  const feasible = listed.map((e) => {
    const replicas = assigned.get(e.name);
    return {
      name: e.name,
      score: e.score,
      allocatableReplicas: e.allocatableReplicas,
      availableReplicas: e.availableReplicas,
      selected: e.selected,
      ...(replicas !== undefined ? { replicas } : {}),
      ...(e.assumedReplicas ? { assumedReplicas: e.assumedReplicas } : {}),
    };
  });

  const d: SchedulingDiagnosis = {
    time: o.time,
    trigger: o.trigger,
    result: result.condition.reason,
    ...(result.affinityName ? { affinityName: result.affinityName } : {}),
    clustersTotal: o.clustersTotal,
    ...(rejected.length ? { rejected } : {}),
    ...(feasible.length ? { feasible } : {}),
    ...(result.scores.length > listed.length ? { feasibleOmitted: result.scores.length - listed.length } : {}),
    ...(result.attempts?.length ? { attempts: result.attempts.map((a) => ({ affinityName: a.affinityName, ...(a.error ? { error: a.error } : {}) })) } : {}),
  };
  return d;
}

/** The diagnosis without what moves on its own (time, trigger, scores, capacity): equal means "the same decision". */
export function diagnosisOutcome(d: SchedulingDiagnosis | undefined): unknown {
  if (!d) return null;
  // what made the scheduler look again is not part of what it decided
  const { time: _t, trigger: _g, feasible, ...rest } = d;
  // capacity also reorders clusters of equal score: compare the set, not the order
  // and scores move with the binding's own placement (ClusterLocality): compare what was chosen
  const f = (feasible ?? []).map(({ allocatableReplicas: _a, availableReplicas: _v, assumedReplicas: _m, score: _s, ...x }) => x).sort((a, b) => cmp(a.name ?? "", b.name ?? ""));
  return { ...rest, feasible: f };
}
