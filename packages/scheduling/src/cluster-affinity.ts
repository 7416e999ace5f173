import { fit, MIN_CLUSTER_SCORE, unfit, type FilterPlugin, type ScorePlugin } from "./types.js";

/**
 * The cluster must match the affinity in force: `clusterAffinity`, or the `clusterAffinities`
 * term being tried (plus its overflow terms for workloads). No affinity: every cluster passes.
 * As a score plugin it gives every cluster 0.
 */
export const ClusterAffinity = {
  name: "ClusterAffinity",
  skip(ctx) {
    return ctx.affinities.length === 0;
  },
  filter(i) {
    if (i.affinities.length === 0) return fit;
    for (const tier of i.affinities) if (tier.matches(i.cluster)) return fit;
    return unfit("cluster(s) did not match the placement cluster affinity constraint");
  },
  score() {
    return MIN_CLUSTER_SCORE;
  },
} satisfies FilterPlugin & ScorePlugin;
