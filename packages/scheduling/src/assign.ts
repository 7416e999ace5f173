import type { TargetCluster } from "@flotilla/api";
import { compileAffinity } from "./affinity.js";
import { SchedulingError, UnschedulableError, wrapError } from "./errors.js";
import { assignStrategy, hasReplicas, replicaSchedulingType, type AssignStrategy } from "./placement.js";
import type { Candidate } from "./select.js";
import type { SchedulingContext } from "./types.js";
import { addTargetClusters, divideByWeights, type TieBreaker } from "./webster.js";

/** Inputs of one assignment besides the candidates. */
export interface AssignOptions {
  /** The Webster tie-breaker (see `uidTieBreaker`). */
  tieBreaker: TieBreaker;
  /** A manual reschedule: divide from scratch instead of keeping the current placement. */
  fresh: boolean;
}

interface Weight {
  name: string;
  weight: number;
}

/** Stable sort by weight, descending (insertion sort: the lists are short). */
function sortDescending(list: Weight[]): Weight[] {
  for (let i = 1; i < list.length; i++) {
    const x = list[i];
    let j = i - 1;
    while (j >= 0 && list[j].weight < x.weight) {
      list[j + 1] = list[j];
      j--;
    }
    list[j + 1] = x;
  }
  return list;
}

function sum(list: ReadonlyArray<{ weight: number }>): number {
  let s = 0;
  for (const x of list) s += x.weight;
  return s;
}

/** Static weight: each cluster's weight is the max over its matching rules; none at all → 1 each. */
function assignByStaticWeight(candidates: readonly Candidate[], ctx: SchedulingContext, replicas: number, o: AssignOptions): TargetCluster[] {
  const wp = ctx.placement.replicaScheduling?.weightPreference;
  let weights: Weight[] = [];
  if (!wp) {
    weights = candidates.map((c) => ({ name: c.name, weight: 1 }));
  } else {
    const rules = (wp.staticWeightList ?? []).map((r) => ({ matches: compileAffinity(r.targetCluster ?? {}), weight: r.weight ?? 0 }));
    for (const c of candidates) {
      let w = 0;
      for (const r of rules) if (r.weight > w && r.matches(c.cluster)) w = r.weight;
      if (w > 0) weights.push({ name: c.name, weight: w });
    }
    if (sum(weights) === 0) weights = candidates.map((c) => ({ name: c.name, weight: 1 }));
  }
  return divideByWeights(replicas, weights, o.tieBreaker);
}

/**
 * Dynamic weight and Aggregated, on top of the current placement (`spec.clusters` ∩ candidates),
 * as Karmada's assignByDynamicStrategy:
 * - fresh (a manual reschedule): weights allocatable + scheduled, divide all `replicas`;
 * - scale down (more assigned than wanted): weights are the scheduled replicas, divide
 *   `replicas` from scratch;
 * - scale up (fewer; the first schedule too): weights allocatable, divide only the added
 *   replicas and add them onto the scheduled ones. The current replicas are not seats of the
 *   division, so 2/4/6 scaled to 24 on equal capacity gives 6/8/10 (4 more each), not 8/8/8;
 * - equal: keep the scheduled.
 */
function assignDynamically(
  candidates: readonly Candidate[],
  ctx: SchedulingContext,
  strategy: "DynamicWeight" | "Aggregated",
  replicas: number,
  o: AssignOptions,
): TargetCluster[] {
  const names = new Set(candidates.map((c) => c.name));
  const scheduled: TargetCluster[] = [];
  let assigned = 0;
  for (const t of ctx.spec.clusters ?? []) {
    if (!t.name || !names.has(t.name)) continue;
    scheduled.push(t);
    assigned += t.replicas ?? 0;
  }

  let weights: Weight[];
  let target: number;
  let init: TargetCluster[] | undefined;
  let step: string;
  if (o.fresh) {
    step = "failed to do fresh scale";
    const already = new Map(scheduled.map((t) => [t.name!, t.replicas ?? 0]));
    weights = sortDescending(candidates.map((c) => ({ name: c.name, weight: c.allocatable + (already.get(c.name) ?? 0) })));
    target = replicas;
  } else if (assigned > replicas) {
    step = "failed to scale down";
    weights = sortDescending(scheduled.map((t) => ({ name: t.name!, weight: t.replicas ?? 0 })));
    target = replicas;
  } else if (assigned < replicas) {
    step = "failed to scale up";
    weights = sortDescending(candidates.map((c) => ({ name: c.name, weight: c.allocatable })));
    target = replicas - assigned;
    init = scheduled;
  } else {
    return scheduled.map((t) => ({ name: t.name, replicas: t.replicas ?? 0 }));
  }

  const available = sum(weights);
  if (available < target) {
    throw wrapError(step, new UnschedulableError(`Clusters available replicas ${available} are not enough to schedule.`));
  }
  if (strategy === "Aggregated") {
    // Clusters used before go first, in their order; then the shortest prefix that is enough.
    const prior = new Set((init ?? []).filter((t) => (t.replicas ?? 0) > 0).map((t) => t.name));
    if (prior.size > 0) weights = [...weights.filter((w) => prior.has(w.name)), ...weights.filter((w) => !prior.has(w.name))];
    let s = 0;
    for (let i = 0; i < weights.length; i++) {
      s += weights[i].weight;
      if (s >= target) {
        weights = weights.slice(0, i + 1);
        break;
      }
    }
  }
  const added = divideByWeights(target, weights, o.tieBreaker);
  return init ? addTargetClusters(init, added) : added;
}

function assignOnce(candidates: readonly Candidate[], ctx: SchedulingContext, strategy: AssignStrategy, replicas: number, o: AssignOptions): TargetCluster[] {
  switch (strategy) {
    case "Duplicated":
      return candidates.map((c) => ({ name: c.name, replicas }));
    case "StaticWeight":
      return assignByStaticWeight(candidates, ctx, replicas, o);
    case "DynamicWeight":
    case "Aggregated":
      return assignDynamically(candidates, ctx, strategy, replicas, o);
  }
}

/** Overflow terms are in play: the observed `clusterAffinities` term has overflow affinities. */
function overflowActive(ctx: SchedulingContext, strategy: AssignStrategy): boolean {
  return ctx.affinities.length > 1 && !ctx.placement.clusterAffinity && (strategy === "DynamicWeight" || strategy === "Aggregated");
}

/** Fills tiers in overflowOrder: each takes `min(remaining, Σ its available)`. */
function assignByTiers(candidates: readonly Candidate[], ctx: SchedulingContext, strategy: AssignStrategy, o: AssignOptions): TargetCluster[] {
  const tiers = new Map<number, Candidate[]>();
  for (const c of candidates) {
    let t = tiers.get(c.overflowOrder);
    if (!t) tiers.set(c.overflowOrder, (t = []));
    t.push(c);
  }
  let remaining = ctx.spec.replicas ?? 0;
  const out: TargetCluster[] = [];
  for (const order of [...tiers.keys()].sort((a, b) => a - b)) {
    const tier = tiers.get(order)!;
    let capacity = 0;
    for (const c of tier) capacity += c.available;
    const take = Math.min(remaining, capacity);
    out.push(...assignOnce(tier, ctx, strategy, take, o));
    remaining -= take;
    if (remaining <= 0) break;
  }
  if (remaining > 0) throw new UnschedulableError("Clusters available replicas are not enough to schedule.");
  return out;
}

/**
 * Assigns replicas to the selected candidates (Karmada's AssignReplicas): without replicas
 * (`spec.replicas` 0, whatever `isWorkload` says) every candidate with 0 replicas; otherwise
 * by strategy, dropping entries with 0 replicas.
 * Throws `SchedulingError` (kind SchedulerError or Unschedulable). Output is unsorted.
 */
export function assignReplicas(candidates: readonly Candidate[], ctx: SchedulingContext, o: AssignOptions): TargetCluster[] {
  if (candidates.length === 0) throw new SchedulingError("SchedulerError", "no clusters available to schedule");
  if (!hasReplicas(ctx.spec)) return candidates.map((c) => ({ name: c.name, replicas: 0 }));
  const strategy = assignStrategy(ctx.placement);
  if (!strategy) {
    throw new SchedulingError(
      "SchedulerError",
      `unsupported replica scheduling strategy, replicaSchedulingType: ${replicaSchedulingType(ctx.placement)}, ` +
        `replicaDivisionPreference: ${ctx.placement.replicaScheduling?.replicaDivisionPreference ?? ""}, please try another scheduling strategy`,
      { reason: "Invalid" },
    );
  }
  const result = overflowActive(ctx, strategy)
    ? assignByTiers(candidates, ctx, strategy, o)
    : assignOnce(candidates, ctx, strategy, ctx.spec.replicas ?? 0, o);
  return result.filter((t) => (t.replicas ?? 0) > 0);
}
