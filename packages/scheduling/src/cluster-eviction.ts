import { fit, unfit, type FilterPlugin } from "./types.js";

/** A cluster some graceful-eviction task is evicting the binding from is not chosen again. */
export const ClusterEviction = {
  name: "ClusterEviction",
  skip(ctx) {
    return ctx.evicting.size === 0;
  },
  filter(i) {
    return i.evicting.has(i.cluster.metadata.name ?? "") ? unfit("cluster(s) is in the process of eviction") : fit;
  },
} satisfies FilterPlugin;
