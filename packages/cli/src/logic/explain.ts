import { bindingName, type AnyResourceBinding } from "@flotilla/api";
import { builtinResource } from "./resources.js";
import { renderTable } from "./table.js";

/**
 * `flotilla explain` and `flotilla simulate`: why a binding's replicas are (or would be) on these
 * clusters and not on the others, one row per cluster: the verdict (selected, feasible but not
 * selected, rejected), the replicas it got, and why: its score and capacity, or the filter
 * plugin and message that rejected it.
 */

/** One scheduling decision, from a binding's diagnosis or a simulation's status. */
export interface Decision {
  /** The placement: spec.clusters of the binding, status.clusters of a simulation. */
  placement: ReadonlyArray<{ name?: string; replicas?: number }>;
  feasible: ReadonlyArray<{ name?: string; score?: number; availableReplicas?: number; selected?: boolean }>;
  rejected: ReadonlyArray<{ plugin?: string; reason?: string; clusters?: readonly string[] }>;
}

export type Verdict = "selected" | "not selected" | "rejected" | "placed";

export interface ClusterVerdict {
  cluster: string;
  verdict: Verdict;
  replicas?: number;
  reason: string;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const rank: Record<Verdict, number> = { selected: 0, placed: 1, "not selected": 2, rejected: 3 };

/** Every cluster the decision names, selected ones first, then by name. */
export function clusterVerdicts(d: Decision): ClusterVerdict[] {
  const replicas = new Map<string, number>();
  for (const p of d.placement) if (p.name) replicas.set(p.name, p.replicas ?? 0);
  const out = new Map<string, ClusterVerdict>();
  for (const f of d.feasible) {
    if (!f.name) continue;
    const selected = f.selected ?? replicas.has(f.name);
    const parts = [`score ${f.score ?? 0}`, ...(f.availableReplicas === undefined ? [] : [`${f.availableReplicas} replicas available`])];
    out.set(f.name, { cluster: f.name, verdict: selected ? "selected" : "not selected", ...(replicas.has(f.name) ? { replicas: replicas.get(f.name) } : {}), reason: parts.join(", ") });
  }
  for (const r of d.rejected) {
    for (const c of r.clusters ?? []) {
      const why = `${r.plugin ?? "?"}: ${r.reason ?? ""}`.trim();
      const cur = out.get(c);
      // one cluster may fail several filters: every reason is listed
      if (cur?.verdict === "rejected") cur.reason += `; ${why}`;
      else out.set(c, { cluster: c, verdict: "rejected", reason: why });
    }
  }
  // placed without a listed score: the diagnosis counted it among the omitted ones, or predates it
  for (const [name, n] of replicas) {
    const cur = out.get(name);
    if (!cur) out.set(name, { cluster: name, verdict: "placed", replicas: n, reason: "in the placement (not listed in the diagnosis)" });
    else if (cur.verdict === "rejected") Object.assign(cur, { replicas: n, reason: `${cur.reason} (still in the placement)` });
  }
  return [...out.values()].sort((a, b) => rank[a.verdict] - rank[b.verdict] || cmp(a.cluster, b.cluster));
}

export function verdictTable(v: readonly ClusterVerdict[]): string {
  if (!v.length) return "No cluster was considered.\n";
  return renderTable({ headers: ["CLUSTER", "VERDICT", "REPLICAS", "REASON"], rows: v.map((x) => [x.cluster, x.verdict, x.replicas === undefined ? "-" : String(x.replicas), x.reason]) });
}

type Condition = { type?: string; status?: string; reason?: string; message?: string };
const conditionLine = (c: Condition | undefined) => (c ? `${c.status ?? "Unknown"} (${c.reason ?? ""})${c.message ? `: ${c.message}` : ""}` : "not yet");

/** `flotilla explain`: the binding, its Scheduled condition, and the per-cluster table. */
export function explainBinding(b: AnyResourceBinding): string {
  const spec = b.spec ?? {};
  const res = spec.resource ?? {};
  const d = b.status?.schedulingDiagnosis;
  const scheduled = (b.status?.conditions ?? []).find((c) => c.type === "Scheduled");
  const name = `${b.metadata.namespace ? `${b.metadata.namespace}/` : ""}${b.metadata.name ?? ""}`;
  let out = `${b.kind ?? "ResourceBinding"} ${name}: ${res.kind ?? "?"} ${res.namespace ? `${res.namespace}/` : ""}${res.name ?? ""}, ${spec.replicas ?? 0} replicas\n`;
  out += `Scheduled: ${conditionLine(scheduled)}\n`;
  if (!d) {
    out += "No scheduling diagnosis yet (the scheduler has not decided on this binding).\n";
    const placed = clusterVerdicts({ placement: spec.clusters ?? [], feasible: [], rejected: [] });
    return placed.length ? out + verdictTable(placed) : out;
  }
  const feasibleCount = (d.feasible?.length ?? 0) + (d.feasibleOmitted ?? 0);
  out += `Decision: ${d.result ?? "?"}${d.trigger ? ` after ${d.trigger}` : ""}${d.time ? ` at ${d.time}` : ""}; ${d.clustersTotal ?? "?"} clusters, ${feasibleCount} feasible${d.affinityName ? `, affinity term ${d.affinityName}` : ""}\n`;
  out += verdictTable(clusterVerdicts({ placement: spec.clusters ?? [], feasible: d.feasible ?? [], rejected: d.rejected ?? [] }));
  if (d.feasibleOmitted) out += `(${d.feasibleOmitted} more feasible clusters not listed)\n`;
  for (const a of d.attempts ?? []) out += `affinity term ${a.affinityName ?? "?"}: ${a.error || "fits"}\n`;
  return out;
}

/** A Simulation's status as the scheduler answers it. */
export interface SimulationStatus {
  clusters?: Array<{ name?: string; replicas?: number }>;
  diagnosis?: Record<string, Array<{ plugin?: string; reason?: string }>>;
  scores?: Array<{ name?: string; score?: number; availableReplicas?: number; selected?: boolean }>;
  conditions?: Condition[];
}

/** `flotilla simulate`: where the replicas would go, and why not elsewhere. */
export function explainSimulation(s: SimulationStatus): string {
  const rejected = Object.entries(s.diagnosis ?? {}).flatMap(([cluster, rs]) => rs.map((r) => ({ plugin: r.plugin, reason: r.reason, clusters: [cluster] })));
  const placed = new Set((s.clusters ?? []).map((c) => c.name));
  const feasible = (s.scores ?? []).map((x) => ({ ...x, selected: x.selected ?? placed.has(x.name) }));
  const scheduled = (s.conditions ?? []).find((c) => c.type === "Scheduled") ?? s.conditions?.[0];
  return `Scheduled: ${conditionLine(scheduled)}\n` + verdictTable(clusterVerdicts({ placement: s.clusters ?? [], feasible, rejected }));
}

const BINDING_WORDS = ["binding", "bindings", "rb", "resourcebinding", "resourcebindings"];
const CLUSTER_BINDING_WORDS = ["clusterbinding", "clusterbindings", "crb", "clusterresourcebinding", "clusterresourcebindings"];

export class ExplainError extends Error {
  override readonly name = "ExplainError";
}

/** Which binding `explain` reads. */
export interface BindingRef {
  cluster: boolean;
  namespace?: string;
  name: string;
}

/**
 * The binding an `explain` command line names: `binding [ns/]name`, `binding/[ns/]name`,
 * `clusterbinding name`, or a resource template (`deployment/nginx`, `deploy nginx`), whose
 * binding is `<name>-<kind>` in the namespace of -n (a cluster-scoped kind's is a ClusterResourceBinding).
 */
export function explainTarget(first: string, second: string | undefined, namespace: string, command = "explain"): BindingRef {
  const slash = first.indexOf("/");
  const [word, rest] = slash < 0 ? [first, second] : [first.slice(0, slash), first.slice(slash + 1)];
  if (slash >= 0 && second !== undefined) throw new ExplainError(`there is no need to give a name (${JSON.stringify(second)}) after ${first}`);
  if (!rest) throw new ExplainError(`${command} needs a name: ${command} ${word} <name>`);
  const w = word.toLowerCase();
  if (BINDING_WORDS.includes(w)) {
    const s = rest.indexOf("/");
    return s < 0 ? { cluster: false, namespace, name: rest } : { cluster: false, namespace: rest.slice(0, s), name: rest.slice(s + 1) };
  }
  if (CLUSTER_BINDING_WORDS.includes(w)) return { cluster: true, name: rest };
  const res = builtinResource(word);
  if (!res) throw new ExplainError(`${command} knows bindings (binding, clusterbinding) and the built-in kinds (deployment, service, configmap, ...), not ${JSON.stringify(word)}`);
  if (rest.includes("/")) throw new ExplainError(`${word}/${rest}: give the namespace with -n, not in the name`);
  return res.namespaced ? { cluster: false, namespace, name: bindingName(res.kind, rest) } : { cluster: true, name: bindingName(res.kind, rest) };
}
