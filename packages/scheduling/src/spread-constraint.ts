import { clusterZones } from "./placement.js";
import { fit, unfit, type FilterPlugin } from "./types.js";

/** A provider, region or zone spread constraint needs that property set on the cluster. */
export const SpreadConstraint = {
  name: "SpreadConstraint",
  skip(ctx) {
    return !ctx.placement.spreadConstraints?.some((sc) => sc.spreadByField === "provider" || sc.spreadByField === "region" || sc.spreadByField === "zone");
  },
  filter(i) {
    const spec = i.cluster.spec;
    for (const sc of i.placement.spreadConstraints ?? []) {
      switch (sc.spreadByField) {
        case "provider":
          if (!spec?.provider) return unfit("cluster(s) did not have provider property");
          break;
        case "region":
          if (!spec?.region) return unfit("cluster(s) did not have region property");
          break;
        case "zone":
          if (clusterZones(i.cluster).length === 0) return unfit("cluster(s) did not have zones property");
          break;
      }
    }
    return fit;
  },
} satisfies FilterPlugin;
