import { MAX_CLUSTER_SCORE, MIN_CLUSTER_SCORE, type ScorePlugin } from "./types.js";

/** Favours clusters the binding is already scheduled to: 100 if in `spec.clusters`, else 0. */
export const ClusterLocality = {
  name: "ClusterLocality",
  score(i, c) {
    if (i.scheduled.size === 0) return MIN_CLUSTER_SCORE;
    return i.scheduled.has(c.metadata.name ?? "") ? MAX_CLUSTER_SCORE : MIN_CLUSTER_SCORE;
  },
} satisfies ScorePlugin;
