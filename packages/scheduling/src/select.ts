import type { Cluster, Placement, ResourceBindingSpec } from "@flotilla/api";
import { SchedulingError } from "./errors.js";
import { clusterZones, ignoresAvailableResource, isStaticWeight, replicaSchedulingType, DUPLICATED } from "./placement.js";

/** A feasible cluster with everything selection and assignment look at. */
export interface Candidate {
  readonly cluster: Cluster;
  readonly name: string;
  /** Sum of the weighted plugin scores. */
  readonly score: number;
  /** Replicas the estimators say the cluster can still take. */
  readonly allocatable: number;
  /** `allocatable` plus the replicas this binding already has there. */
  readonly available: number;
  /** With overflow terms in play: 0 for the primary term, i for the i-th overflow term, 1000 for none; otherwise 0. */
  readonly overflowOrder: number;
}

/** Spread-by fields that group clusters. */
export type SpreadField = "region" | "zone" | "provider";

/** overflowOrder ↑, score ↓, available ↓, name ↑ (in place). */
export function sortCandidates<T extends Candidate>(list: T[]): T[] {
  // A plain merge sort: for the ~100 items here it beats Array#sort, whose calls back into a
  // JS comparator dominate the cost.
  const n = list.length;
  if (n < 2) return list;
  let src = list.slice();
  let dst = new Array<T>(n);
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) dst[k++] = before(src[j], src[i]) ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    const t = src;
    src = dst;
    dst = t;
  }
  for (let i = 0; i < n; i++) list[i] = src[i];
  return list;
}

/** Strictly before in candidate order. */
function before(a: Candidate, b: Candidate): boolean {
  if (a.overflowOrder !== b.overflowOrder) return a.overflowOrder < b.overflowOrder;
  if (a.score !== b.score) return a.score > b.score;
  if (a.available !== b.available) return a.available > b.available;
  return a.name < b.name;
}

/** A region, zone or provider with its clusters (in candidate order) and its group score. */
export interface CandidateGroup {
  readonly name: string;
  readonly clusters: Candidate[];
  readonly score: number;
  readonly available: number;
}

const WEIGHT_UNIT = 1000;

/** A spread constraint after defaulting. */
export interface ConstraintView {
  minGroups: number;
  maxGroups: number;
}

/**
 * The spread constraint per field (the last one wins, as in a Go map). The webhook's defaults
 * are applied again so undefaulted input behaves the same: no field and no label → `cluster`,
 * `minGroups` 0 → 1. `maxGroups` is not defaulted. Label constraints are ignored.
 */
export function spreadConstraintMap(placement: Placement): Map<string, ConstraintView> {
  const m = new Map<string, ConstraintView>();
  for (const sc of placement.spreadConstraints ?? []) {
    const field = sc.spreadByField || (sc.spreadByLabel ? "" : "cluster");
    if (!field) continue;
    m.set(field, { minGroups: sc.minGroups || 1, maxGroups: sc.maxGroups ?? 0 });
  }
  return m;
}

/**
 * A group's score. Duplicated: `1000·|valid| + Σscore(valid)/|valid|` over clusters that can hold
 * all replicas (0 if none). Divided: with `t = ⌈replicas/minGroups⌉` and
 * `cmin = max(cluster.minGroups, minGroups)`, take clusters in order until `count ≥ cmin` and
 * `Σavailable ≥ t`; short → `1000·Σavailable + Σscore/len(all)`, else `1000·t + Σscore/count`.
 */
export function groupScore(
  clusters: readonly Candidate[],
  placement: Placement,
  spec: ResourceBindingSpec,
  minGroups: number,
  clusterMinGroups = spreadConstraintMap(placement).get("cluster")?.minGroups ?? 0,
): number {
  const replicas = spec.replicas ?? 0;
  if (replicaSchedulingType(placement) === DUPLICATED) {
    let valid = 0;
    let sum = 0;
    for (const c of clusters) {
      if (c.available >= replicas) {
        valid++;
        sum += c.score;
      }
    }
    return valid === 0 ? 0 : valid * WEIGHT_UNIT + Math.floor(sum / valid);
  }
  const target = Math.ceil(replicas / Math.max(1, minGroups));
  const cmin = Math.max(clusterMinGroups, minGroups);
  let sumAvailable = 0;
  let sumScore = 0;
  let count = 0;
  for (const c of clusters) {
    sumAvailable += c.available;
    sumScore += c.score;
    count++;
    if (count >= cmin && sumAvailable >= target) break;
  }
  if (sumAvailable < target) return sumAvailable * WEIGHT_UNIT + Math.floor(sumScore / clusters.length);
  return target * WEIGHT_UNIT + Math.floor(sumScore / count);
}


function addMember(members: Map<string, Candidate[]>, key: string, c: Candidate): void {
  const list = members.get(key);
  if (list) list.push(c);
  else members.set(key, [c]);
}

/** Groups sorted candidates by region, zone (a cluster may be in several) or provider, with scores. */
export function groupCandidates(
  sorted: readonly Candidate[],
  field: SpreadField,
  placement: Placement,
  spec: ResourceBindingSpec,
): Map<string, CandidateGroup> {
  return groupByField(sorted, field, placement, spec, spreadConstraintMap(placement));
}

function groupByField(
  sorted: readonly Candidate[],
  field: SpreadField,
  placement: Placement,
  spec: ResourceBindingSpec,
  constraints: Map<string, ConstraintView>,
): Map<string, CandidateGroup> {
  const members = new Map<string, Candidate[]>();
  for (const c of sorted) {
    if (field === "zone") {
      for (const z of clusterZones(c.cluster)) addMember(members, z, c);
    } else {
      const v = c.cluster.spec?.[field];
      if (v) addMember(members, v, c);
    }
  }
  const minGroups = constraints.get(field)?.minGroups ?? 0;
  const clusterMinGroups = constraints.get("cluster")?.minGroups ?? 0;
  const groups = new Map<string, CandidateGroup>();
  for (const [name, clusters] of members) {
    let available = 0;
    for (const c of clusters) available += c.available;
    groups.set(name, { name, clusters, score: groupScore(clusters, placement, spec, minGroups, clusterMinGroups), available });
  }
  return groups;
}

/** A group as the DFS sees it. */
export interface DfsGroup {
  readonly name: string;
  readonly value: number;
  readonly weight: number;
}

interface DfsPath {
  id: number;
  groups: DfsGroup[];
  weight: number;
  value: number;
}

function byWeightThenName(a: DfsGroup, b: DfsGroup): number {
  return b.weight - a.weight || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * Picks the best combination of groups whose values sum to at least `target`, with between
 * `min` and `max` groups. Depth-first over groups sorted by value ↑, weight ↓, name ↑; every
 * path that reaches the target within bounds is recorded; paths are ranked by Σweight ↓,
 * Σvalue ↓, discovery order; then the best is replaced by any ranked path that is a strict
 * prefix of it. The result is in path order (weight ↓, name ↑), or `undefined` if none fits.
 */
export function selectGroups(groups: readonly DfsGroup[], min: number, max: number, target: number): DfsGroup[] | undefined {
  if (groups.length === 0) return undefined;
  const sorted = [...groups].sort(byValueWeightName);
  const paths: DfsPath[] = [];
  findPaths(sorted, min, max, target, sorted.length === min, [], 0, 0, paths);
  if (paths.length === 0) return undefined;
  if (paths.length === 1) return paths[0].groups;
  paths.sort(byPathRank);
  let best = paths[0];
  for (let i = 1; i < paths.length; i++) {
    const sub = paths[i];
    if (sub.groups.length < best.groups.length && sub.groups.every((g, j) => best.groups[j].name === g.name)) best = sub;
  }
  return best.groups;
}

function byValueWeightName(a: DfsGroup, b: DfsGroup): number {
  return a.value - b.value || b.weight - a.weight || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

function byPathRank(a: DfsPath, b: DfsPath): number {
  return b.weight - a.weight || b.value - a.value || a.id - b.id;
}

function findPaths(
  sorted: readonly DfsGroup[],
  min: number,
  max: number,
  target: number,
  onlyOne: boolean,
  path: DfsGroup[],
  sum: number,
  begin: number,
  paths: DfsPath[],
): void {
  if (sum >= target && path.length >= min && path.length <= max) {
    const gs = [...path].sort(byWeightThenName);
    let weight = 0;
    let value = 0;
    for (const g of gs) {
      weight += g.weight;
      value += g.value;
    }
    paths.push({ id: paths.length + 1, groups: gs, weight, value });
    return;
  }
  if (path.length >= max) return;
  for (let i = begin; i < sorted.length; i++) {
    path.push(sorted[i]);
    findPaths(sorted, min, max, target, onlyOne, path, sum + sorted[i].value, i + 1, paths);
    path.pop();
    // With exactly `min` groups only the path holding all of them can qualify.
    if (onlyOne) break;
  }
}

/** Replicas the selection must cover, or -1 when capacity is ignored (Duplicated). */
export function neededReplicas(placement: Placement, spec: ResourceBindingSpec): number {
  return ignoresAvailableResource(placement) ? -1 : (spec.replicas ?? 0);
}

function selectByRegion(sorted: Candidate[], constraints: Map<string, ConstraintView>, placement: Placement, spec: ResourceBindingSpec): Candidate[] {
  const region = constraints.get("region")!;
  const cluster = constraints.get("cluster") ?? { minGroups: 0, maxGroups: 0 };
  const regions = groupByField(sorted, "region", placement, spec, constraints);
  if (regions.size < region.minGroups) {
    throw new SchedulingError("SchedulerError", "the number of feasible region is less than spreadConstraint.MinGroups");
  }
  const groups: DfsGroup[] = [];
  for (const g of regions.values()) groups.push({ name: g.name, value: g.clusters.length, weight: g.score });
  const chosen = selectGroups(groups, region.minGroups, region.maxGroups, cluster.minGroups);
  if (!chosen) throw new SchedulingError("SchedulerError", "the number of clusters is less than the cluster spreadConstraint.MinGroups");
  const selected: Candidate[] = [];
  const chosenRegions = new Set<string>();
  let total = 0;
  for (const g of chosen) {
    const members = regions.get(g.name)!.clusters;
    selected.push(members[0]);
    chosenRegions.add(g.name);
    total += members.length;
  }
  let more = Math.min(total, cluster.maxGroups) - selected.length;
  if (more > 0) {
    // The rest of the chosen regions' clusters, best first: `sorted` is already in that order.
    const firsts = new Set(selected);
    for (let i = 0; i < sorted.length && more > 0; i++) {
      const c = sorted[i];
      const r = c.cluster.spec?.region;
      if (r && chosenRegions.has(r) && !firsts.has(c)) {
        selected.push(c);
        more--;
      }
    }
  }
  return selected;
}

function enough(list: readonly Candidate[], need: number): boolean {
  let total = 0;
  for (const c of list) total += c.available;
  return total >= need;
}

/**
 * The first `n` clusters; while their available replicas fall short of `need`, walk from the
 * last position to the first, swapping each with the leftover cluster that has the most
 * available replicas strictly above it. Empty when still short.
 */
export function selectByAvailableResource(sorted: readonly Candidate[], n: number, need: number): Candidate[] {
  const picked = sorted.slice(0, n);
  const rest = sorted.slice(n);
  for (let pos = picked.length - 1; pos >= 0 && !enough(picked, need); pos--) {
    let best = -1;
    let max = picked[pos].available;
    for (let j = 0; j < rest.length; j++) {
      if (rest[j].available > max) {
        max = rest[j].available;
        best = j;
      }
    }
    if (best < 0) continue;
    const out = picked[pos];
    picked[pos] = rest[best];
    rest[best] = out;
  }
  return enough(picked, need) ? picked : [];
}

function selectByCluster(sorted: Candidate[], constraint: ConstraintView, need: number): Candidate[] {
  if (sorted.length < constraint.minGroups) {
    throw new SchedulingError("SchedulerError", "the number of feasible clusters is less than spreadConstraint.MinGroups");
  }
  const n = Math.min(sorted.length, constraint.maxGroups);
  if (need === -1) return sorted.slice(0, n);
  const picked = selectByAvailableResource(sorted, n, need);
  if (picked.length === 0) throw new SchedulingError("SchedulerError", `no enough resource when selecting ${n} clusters`);
  return picked;
}

/**
 * Chooses the candidates honouring `spreadConstraints` (Karmada's SelectBestClusters). `sorted`
 * must already be in `sortCandidates` order. Everything is returned when there are no spread
 * constraints or the division is by static weight. A region constraint selects regions by DFS,
 * then clusters; otherwise a cluster constraint picks the best `min(#clusters, maxGroups)`.
 */
export function selectClusters(sorted: Candidate[], placement: Placement, spec: ResourceBindingSpec): Candidate[] {
  if (!placement.spreadConstraints?.length || isStaticWeight(placement)) return sorted;
  const constraints = spreadConstraintMap(placement);
  if (constraints.has("region")) return selectByRegion(sorted, constraints, placement, spec);
  const cluster = constraints.get("cluster");
  if (cluster) return selectByCluster(sorted, cluster, neededReplicas(placement, spec));
  throw new SchedulingError("SchedulerError", "just support cluster and region spread constraint", { reason: "Invalid" });
}
