/**
 * The portal's failover timeline: what changed between two versions of a Cluster or a binding,
 * as the steps of a failover (taint → eviction → reschedule → healthy → task dropped). The
 * portal feeds it every watch event with the version it held before.
 *
 * The code is browser JavaScript kept as text, so that the page runs exactly what the table test
 * (timeline.test.ts) runs: `timelineSteps(kind, before, after)` returns the steps, oldest first,
 * each `{ step, object, detail }` where step is one of TIMELINE_STEPS.
 */
export const TIMELINE_STEPS = ["tainted", "untainted", "not-ready", "ready", "eviction", "reschedule", "healthy", "task-dropped"] as const;
export type TimelineStep = (typeof TIMELINE_STEPS)[number];
export interface TimelineEntry {
  step: TimelineStep;
  object: string;
  detail: string;
}

export const TIMELINE_JS = String.raw`
function timelineSteps(kind, before, after) {
  const out = [];
  if (!after) return out;
  const name = (after.metadata.namespace ? after.metadata.namespace + "/" : "") + after.metadata.name;
  if (kind === "Cluster") {
    const taint = (t) => t.key + (t.value ? "=" + t.value : "") + ":" + t.effect;
    const was = new Set(((before && before.spec && before.spec.taints) || []).map(taint));
    const now = new Set(((after.spec && after.spec.taints) || []).map(taint));
    for (const t of now) if (!was.has(t)) out.push({ step: "tainted", object: name, detail: t });
    for (const t of was) if (!now.has(t)) out.push({ step: "untainted", object: name, detail: t });
    const ready = (o) => ((o && o.status && o.status.conditions) || []).find((c) => c.type === "Ready");
    const r0 = ready(before);
    const r1 = ready(after);
    const s0 = r0 ? r0.status : undefined;
    const s1 = r1 ? r1.status : undefined;
    if (s1 && s1 !== s0) {
      if (s1 === "True") out.push({ step: "ready", object: name, detail: "Ready" });
      else if (s0 === "True" || s0 === undefined) out.push({ step: "not-ready", object: name, detail: "Ready " + s1 + (r1.reason ? " (" + r1.reason + ")" : "") });
    }
    return out;
  }
  // ResourceBinding and ClusterResourceBinding
  const tasks = (o) => new Map(((o && o.spec && o.spec.gracefulEvictionTasks) || []).map((t) => [t.fromCluster, t]));
  const t0 = tasks(before);
  const t1 = tasks(after);
  for (const [from, t] of t1) if (!t0.has(from)) out.push({ step: "eviction", object: name, detail: "from " + from + (t.reason ? " (" + t.reason + ")" : "") });
  const placement = (o, without) =>
    ((o && o.spec && o.spec.clusters) || [])
      .filter((c) => !without || !without.has(c.name))
      .map((c) => c.name + ":" + (c.replicas || 0))
      .sort()
      .join(" ");
  // an eviction takes its cluster out of the placement: that is the eviction's step, and a
  // reschedule is what changes beyond it
  const evicted = new Set([...t1.keys()].filter((c) => !t0.has(c)));
  const p0 = placement(before, evicted);
  const p1 = placement(after);
  if (before && p0 !== p1) out.push({ step: "reschedule", object: name, detail: (p0 || "nowhere") + " → " + (p1 || "nowhere") });
  // every target reports Healthy, with as many ready replicas as it was given (when it says)
  const healthy = (o) => {
    const targets = (o && o.spec && o.spec.clusters) || [];
    if (!targets.length) return false;
    const agg = new Map(((o && o.status && o.status.aggregatedStatus) || []).map((a) => [a.clusterName, a]));
    return targets.every((c) => {
      const a = agg.get(c.name);
      if (!a || a.health !== "Healthy") return false;
      const ready = a.status && a.status.readyReplicas;
      return typeof ready !== "number" || !c.replicas || ready >= c.replicas;
    });
  };
  if (healthy(after) && !healthy(before)) out.push({ step: "healthy", object: name, detail: "healthy on " + p1 });
  for (const [from, t] of t0) if (!t1.has(from)) out.push({ step: "task-dropped", object: name, detail: "from " + from + (t.reason ? " (" + t.reason + ")" : "") });
  return out;
}`;

/** The timeline's function, compiled from TIMELINE_JS (for tests and anything server-side that wants the same answer). */
export function timelineFunction(): (kind: "Cluster" | "ResourceBinding" | "ClusterResourceBinding", before: unknown, after: unknown) => TimelineEntry[] {
  return new Function(`${TIMELINE_JS}\nreturn timelineSteps;`)() as ReturnType<typeof timelineFunction>;
}
