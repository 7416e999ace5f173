// The member simulator's admin API from a load runner: faults, and pods per cluster.
import { parseResourceList, type ResourceAmounts } from "@flotilla/api";
import { pool } from "./stats.js";

async function call<T>(method: string, url: string, body?: unknown): Promise<T> {
  const r = await fetch(url, { method, ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }) });
  if (!r.ok) throw new Error(`${method} ${url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

export type FaultMode = "healthy" | "not-ready" | "unreachable" | "slow";

export async function setFault(adminUrl: string, cluster: string, mode: FaultMode, latencyMs?: number): Promise<void> {
  await call("PUT", `${adminUrl}/admin/clusters/${cluster}/fault`, { mode, ...(latencyMs === undefined ? {} : { latencyMs }) });
}

export interface ClusterPods {
  name: string;
  /** Pods bound to a node (running). */
  running: number;
  /** Pods that fit on no node. */
  pending: number;
  /** Node capacity: cpu in millicores, memory in bytes, pods in slots. */
  allocatable: ResourceAmounts;
  /** What every pod asks for, bound or not (cpu in millicores, memory in bytes). */
  requested: ResourceAmounts;
}

interface Summary {
  allocatable: Record<string, string>;
  allocated: Record<string, string>;
  allocating: Record<string, string>;
}

/** Every cluster's pods from its resource summary (`GET /admin/clusters/{name}/summary`): allocated = bound, allocating = pending. */
export async function clusterPods(adminUrl: string, concurrency = 16): Promise<ClusterPods[]> {
  const { clusters } = await call<{ clusters: { name: string }[] }>("GET", `${adminUrl}/admin/clusters`);
  const out: ClusterPods[] = [];
  await pool(clusters.length, concurrency, async (i) => {
    const { name } = clusters[i]!;
    const s = await call<Summary>("GET", `${adminUrl}/admin/clusters/${name}/summary`);
    const bound = parseResourceList(s.allocated);
    const pending = parseResourceList(s.allocating);
    const requested: ResourceAmounts = {};
    for (const k of new Set([...Object.keys(bound), ...Object.keys(pending)])) requested[k] = (bound[k] ?? 0) + (pending[k] ?? 0);
    out.push({ name, running: bound.pods ?? 0, pending: pending.pods ?? 0, allocatable: parseResourceList(s.allocatable), requested });
  });
  return out.sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true }));
}
