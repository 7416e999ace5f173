import type { AnyResourceBinding, Cluster } from "@flotilla/api";
import { resolveAffinities } from "./affinity.js";
import { clusterFacts, snapshotFacts, type ClusterFacts } from "./cluster-facts.js";
import { evictingClusters, isWorkload, scheduledReplicas } from "./placement.js";
import { inTreeRegistry } from "./registry.js";
import { fit, type ClusterScore, type FilterInput, type FilterPlugin, type Registry, type SchedulingContext, type ScorePlugin, type Verdict } from "./types.js";

/** A filter plugin's objection to one cluster. */
export interface PluginReason {
  plugin: string;
  reason: string;
}

/** The enabled plugins, in registry order, and the score weights. */
export interface Framework {
  readonly filters: readonly FilterPlugin[];
  readonly scorers: readonly ScorePlugin[];
  /** Score multiplier per plugin name; 1 when absent. */
  readonly weights: Readonly<Record<string, number>>;
  /** Names in `enabled` that the registry does not have. */
  readonly unknown: readonly string[];
}

/**
 * Which registry entries an `enabled` string turns on: `*` is every plugin, `Name` adds one,
 * `-Name` disables one (a disable wins wherever it appears). Empty means `*`.
 */
export function enabledPluginNames(registry: Registry, enabled = "*"): { names: string[]; unknown: string[] } {
  const items = enabled
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) items.push("*");
  const all = Object.keys(registry);
  const on = new Set<string>();
  const off = new Set<string>();
  const unknown: string[] = [];
  for (const item of items) {
    if (item === "*") all.forEach((n) => on.add(n));
    else if (item.startsWith("-")) off.add(item.slice(1));
    else on.add(item);
  }
  for (const n of [...on, ...off]) if (!Object.hasOwn(registry, n) && !unknown.includes(n)) unknown.push(n);
  return { names: all.filter((n) => on.has(n) && !off.has(n)), unknown };
}

const frameworkCache = new WeakMap<Registry, Map<string, Framework>>();

/** Builds (and caches per registry and `enabled` string) the framework; `weights` bypass the cache. */
export function buildFramework(registry: Registry = inTreeRegistry, enabled = "*", weights?: Readonly<Record<string, number>>): Framework {
  let perRegistry = frameworkCache.get(registry);
  if (!weights) {
    const hit = perRegistry?.get(enabled);
    if (hit) return hit;
  }
  const { names, unknown } = enabledPluginNames(registry, enabled);
  const filters: FilterPlugin[] = [];
  const scorers: ScorePlugin[] = [];
  for (const n of names) {
    const p = registry[n]!;
    if ("filter" in p && typeof p.filter === "function") filters.push(p);
    if ("score" in p && typeof p.score === "function") scorers.push(p);
  }
  const fw: Framework = { filters, scorers, weights: weights ?? {}, unknown };
  if (!weights) {
    if (!perRegistry) frameworkCache.set(registry, (perRegistry = new Map()));
    if (perRegistry.size >= 64) perRegistry.clear();
    perRegistry.set(enabled, fw);
  }
  return fw;
}

/** The per-attempt context plugins read: resolved affinities, current placement, eviction tasks. */
export function buildContext(binding: AnyResourceBinding, affinityName: string | undefined): SchedulingContext {
  const spec = binding.spec ?? {};
  const placement = spec.placement ?? {};
  const workload = isWorkload(spec);
  return {
    binding,
    spec,
    placement,
    workload,
    affinities: resolveAffinities(placement, affinityName, workload),
    affinityName,
    scheduled: scheduledReplicas(spec),
    evicting: evictingClusters(spec),
  };
}

/** The input a filter plugin sees for one cluster (for calling a plugin directly). */
export function filterInput(ctx: SchedulingContext, cluster: Cluster): FilterInput {
  return { ...ctx, cluster, facts: clusterFacts(cluster) };
}

/** Per-plugin cumulative time in milliseconds, filled when passed to the run functions. */
export type PluginTimings = Map<string, number>;

export interface FilterOutcome {
  /** Clusters every filter accepted, in input order. */
  feasible: Cluster[];
  /** The cached facts of the feasible clusters, parallel to `feasible`. */
  feasibleFacts: ClusterFacts[];
  /** Every objection of every filter, per rejected cluster (deleting clusters are noted too). */
  diagnosis: Record<string, PluginReason[]>;
  /**
   * Per rejected cluster, the reasons of the first filter (registry order) that rejected it:
   * what upstream's FitError counts. Deleting clusters are not in it.
   */
  fitReasons: string[][];
  /** Every cluster in the snapshot, deleting ones included. */
  total: number;
}

/**
 * Runs every filter on every cluster. Deleting clusters are skipped (noted in the diagnosis
 * under `Scheduler` but not counted as a filter failure); Ready is not checked, taints do that.
 * Filters whose `skip` says they cannot reject anything for this binding are not run.
 */
export function runFilters(fw: Framework, ctx: SchedulingContext, clusters: readonly Cluster[], timings?: PluginTimings): FilterOutcome {
  const out: FilterOutcome = { feasible: [], feasibleFacts: [], diagnosis: {}, fitReasons: [], total: clusters.length };
  const facts = snapshotFacts(clusters);
  const input = { ...ctx, cluster: undefined as unknown as Cluster, facts: undefined as unknown as ClusterFacts } as {
    -readonly [K in keyof FilterInput]: FilterInput[K];
  };
  const filters = fw.filters.filter((p) => !p.skip?.(ctx));
  // One call site per slot: for a given framework each site sees a single plugin, so the
  // calls stay monomorphic and can be inlined. Plugins past the sixth share a generic loop.
  const f0 = filters[0];
  const f1 = filters[1];
  const f2 = filters[2];
  const f3 = filters[3];
  const f4 = filters[4];
  const f5 = filters[5];
  const more = filters.length > 6 ? filters.slice(6) : undefined;
  const verdicts: Verdict[] = new Array<Verdict>(filters.length);
  for (let c = 0; c < clusters.length; c++) {
    const cluster = clusters[c];
    if (cluster.metadata.deletionTimestamp) {
      out.diagnosis[cluster.metadata.name ?? ""] = [{ plugin: "Scheduler", reason: "cluster is deleting" }];
      continue;
    }
    input.cluster = cluster;
    input.facts = facts[c];
    let ok = true;
    if (timings) {
      for (let j = 0; j < filters.length; j++) {
        const t0 = performance.now();
        const v = (verdicts[j] = filters[j].filter(input));
        timings.set(filters[j].name, (timings.get(filters[j].name) ?? 0) + performance.now() - t0);
        if (v.code !== "fit") ok = false;
      }
    } else {
      const v0 = f0 === undefined ? fit : f0.filter(input);
      const v1 = f1 === undefined ? fit : f1.filter(input);
      const v2 = f2 === undefined ? fit : f2.filter(input);
      const v3 = f3 === undefined ? fit : f3.filter(input);
      const v4 = f4 === undefined ? fit : f4.filter(input);
      const v5 = f5 === undefined ? fit : f5.filter(input);
      ok = v0.code === "fit" && v1.code === "fit" && v2.code === "fit" && v3.code === "fit" && v4.code === "fit" && v5.code === "fit";
      if (more) {
        for (let j = 0; j < more.length; j++) if ((verdicts[j + 6] = more[j].filter(input)).code !== "fit") ok = false;
      }
      if (!ok) {
        const head = [v0, v1, v2, v3, v4, v5];
        for (let j = 0; j < Math.min(6, filters.length); j++) verdicts[j] = head[j];
      }
    }
    if (ok) {
      out.feasible.push(cluster);
      out.feasibleFacts.push(facts[c]);
    } else {
      recordFailure(out, cluster, filters, verdicts);
    }
  }
  return out;
}

function recordFailure(out: FilterOutcome, cluster: Cluster, filters: readonly FilterPlugin[], verdicts: readonly Verdict[]): void {
  const reasons: PluginReason[] = [];
  let first: string[] | undefined;
  for (let j = 0; j < filters.length; j++) {
    const v = verdicts[j];
    if (v.code === "fit") continue;
    for (const reason of v.reasons) reasons.push({ plugin: filters[j].name, reason });
    first ??= v.reasons;
  }
  out.diagnosis[cluster.metadata.name ?? ""] = reasons;
  out.fitReasons.push(first!);
}

export interface ScoreOutcome {
  /** Weighted sum per cluster, in the order of the input clusters. */
  total: number[];
  /** Weighted score per plugin name, per cluster. */
  byPlugin: Array<Record<string, number>>;
}

/** Runs every score plugin (then its `normalize`), applies weights and sums per cluster. */
export function runScores(fw: Framework, ctx: SchedulingContext, clusters: readonly Cluster[], timings?: PluginTimings): ScoreOutcome {
  const n = clusters.length;
  const total = new Array<number>(n).fill(0);
  const perPlugin: number[][] = [];
  for (const p of fw.scorers) {
    const t0 = timings ? performance.now() : 0;
    const w = fw.weights[p.name] ?? 1;
    const scores = new Array<number>(n);
    if (p.normalize) {
      const list: ClusterScore[] = clusters.map((c) => ({ name: c.metadata.name ?? "", score: p.score(ctx, c) }));
      const normalized = p.normalize(list);
      for (let i = 0; i < n; i++) scores[i] = normalized[i].score * w;
    } else {
      for (let i = 0; i < n; i++) scores[i] = p.score(ctx, clusters[i]) * w;
    }
    for (let i = 0; i < n; i++) total[i] += scores[i];
    perPlugin.push(scores);
    if (timings) timings.set(p.name, (timings.get(p.name) ?? 0) + performance.now() - t0);
  }
  const byPlugin = new Array<Record<string, number>>(n);
  for (let i = 0; i < n; i++) {
    const r: Record<string, number> = {};
    for (let j = 0; j < perPlugin.length; j++) r[fw.scorers[j].name] = perPlugin[j][i];
    byPlugin[i] = r;
  }
  return { total, byPlugin };
}
