import { APIEnablement } from "./api-enablement.js";
import { ClusterAffinity } from "./cluster-affinity.js";
import { ClusterEviction } from "./cluster-eviction.js";
import { ClusterLocality } from "./cluster-locality.js";
import { SpreadConstraint } from "./spread-constraint.js";
import { TaintToleration } from "./taint-toleration.js";
import type { Registry } from "./types.js";

/**
 * The in-tree plugins. Registry order is the order filters run in, so it decides which reason
 * a FitError counts for a cluster several filters reject (upstream's order is unspecified).
 */
export const inTreeRegistry: Registry = Object.freeze({
  [APIEnablement.name]: APIEnablement,
  [TaintToleration.name]: TaintToleration,
  [ClusterAffinity.name]: ClusterAffinity,
  [SpreadConstraint.name]: SpreadConstraint,
  [ClusterEviction.name]: ClusterEviction,
  [ClusterLocality.name]: ClusterLocality,
});
