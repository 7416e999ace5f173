import type { Cluster } from "@flotilla/api";
import { clusterFacts } from "./cluster-facts.js";
import { fit, unfit, type FilterPlugin } from "./types.js";

export type APIEnablementState = "Enabled" | "Disabled" | "Unknown";

/**
 * Whether the cluster serves `apiVersion`/`kind`: listed in `status.apiEnablements` → Enabled;
 * otherwise Disabled when the list is complete (`CompleteAPIEnablements=True`), else Unknown.
 */
export function apiEnablement(cluster: Cluster, apiVersion: string, kind: string): APIEnablementState {
  const facts = clusterFacts(cluster);
  if (facts.apiListed(apiVersion, kind)) return "Enabled";
  return facts.completeAPIs ? "Disabled" : "Unknown";
}

/** The template's API must be enabled on the cluster; a cluster already scheduled to passes. */
export const APIEnablement = {
  name: "APIEnablement",
  filter(i) {
    const r = i.spec.resource;
    if (i.facts.apiListed(r?.apiVersion ?? "", r?.kind ?? "")) return fit;
    if (i.scheduled.has(i.facts.name)) return fit;
    return unfit("cluster(s) did not have the API resource");
  },
} satisfies FilterPlugin;
