import { parseResourceList, type Cluster } from "@flotilla/api";
import type { Printed } from "./table.js";

/**
 * `flotilla top clusters`: each member's use of its capacity from status.resourceSummary, as
 * `kubectl top node` prints nodes: CPU in millicores and memory in Mi of what bound pods request
 * (allocated), each with its share of allocatable; pods as used/allocatable. A member that has
 * not reported a summary shows <unknown>.
 */
export function topClusters(clusters: readonly Cluster[]): Printed {
  const rows = clusters.map((c) => {
    const s = c.status?.resourceSummary;
    const name = c.metadata.name ?? "";
    if (!s?.allocatable) return [name, "<unknown>", "<unknown>", "<unknown>", "<unknown>", "<unknown>"];
    const total = parseResourceList(s.allocatable);
    const used = parseResourceList(s.allocated);
    const pending = parseResourceList(s.allocating);
    const pct = (k: string) => (total[k] ? `${Math.round(((used[k] ?? 0) * 100) / total[k]!)}%` : "<unknown>");
    const mi = (b: number) => `${Math.round(b / 2 ** 20)}Mi`;
    return [name, `${used.cpu ?? 0}m`, pct("cpu"), mi(used.memory ?? 0), pct("memory"), `${used.pods ?? 0}/${total.pods ?? 0}${pending.pods ? ` (+${pending.pods} pending)` : ""}`];
  });
  return { headers: ["NAME", "CPU(cores)", "CPU%", "MEMORY(bytes)", "MEMORY%", "PODS"], rows };
}
