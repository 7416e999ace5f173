import type { AnyResourceBinding, Cluster, ClusterAffinity, Placement, ResourceBindingSpec } from "@flotilla/api";
import type { ClusterFacts } from "./cluster-facts.js";

/** A plugin's answer for one cluster. */
export type Verdict = { code: "fit" } | { code: "unfit" | "error"; reasons: string[] };

export interface Plugin {
  readonly name: string;
}

export interface FilterPlugin extends Plugin {
  filter(i: FilterInput): Verdict;
  /**
   * Optional pre-check once per attempt (kube-scheduler's PreFilter "Skip"): true when the
   * filter cannot reject any cluster for this binding, so it is not run per cluster.
   */
  skip?(ctx: SchedulingContext): boolean;
}

export interface ScorePlugin extends Plugin {
  /** 0..100 */
  score(i: ScoreInput, c: Cluster): number;
  /** Rescales the scores of all clusters; must return them in the same order. */
  normalize?(s: ClusterScore[]): ClusterScore[];
}

export interface ClusterScore {
  name: string;
  score: number;
}

/** One affinity in force. `order` is 0 for the primary affinity and i for the i-th overflow term. */
export interface AffinityTier {
  readonly affinity: ClusterAffinity;
  readonly order: number;
  readonly matches: (cluster: Cluster) => boolean;
}

/** Everything plugins may look at besides the cluster, computed once per scheduling attempt. */
export interface SchedulingContext {
  readonly binding: AnyResourceBinding;
  readonly spec: ResourceBindingSpec;
  readonly placement: Placement;
  /**
   * Karmada's IsWorkload (`isWorkload`): replicas > 0 or `replicaRequirements` set. Only the
   * overflow terms depend on it; division and estimation look at `spec.replicas` (`hasReplicas`).
   */
  readonly workload: boolean;
  /**
   * The affinities a cluster may match (any one is enough): empty when the placement has none,
   * `[clusterAffinity]`, or the observed term followed (for workloads) by its overflow terms.
   */
  readonly affinities: readonly AffinityTier[];
  /** The `clusterAffinities` term being tried, if the placement uses the ordered list. */
  readonly affinityName: string | undefined;
  /** `spec.clusters` as name → replicas. */
  readonly scheduled: ReadonlyMap<string, number>;
  /** Clusters named by a graceful-eviction task's `fromCluster`. */
  readonly evicting: ReadonlySet<string>;
}

export interface FilterInput extends SchedulingContext {
  readonly cluster: Cluster;
  /** Cached values derived from `cluster` (parsed resource summary, API lookup). */
  readonly facts: ClusterFacts;
}

export type ScoreInput = SchedulingContext;

/** A registry of plugins by name; `enabled` strings like `"*,-ClusterLocality"` pick from it. */
export type Registry = Readonly<Record<string, FilterPlugin | ScorePlugin | (FilterPlugin & ScorePlugin)>>;

export const MIN_CLUSTER_SCORE = 0;
export const MAX_CLUSTER_SCORE = 100;
/** Kubernetes' int32 maximum: "no bound" for available replicas. */
export const MAX_INT32 = 2147483647;

export const fit: Verdict = Object.freeze({ code: "fit" }) as Verdict;

export function unfit(...reasons: string[]): Verdict {
  return { code: "unfit", reasons };
}
