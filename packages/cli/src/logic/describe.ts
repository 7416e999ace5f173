import type { AnyResourceBinding } from "@flotilla/api";
import { renderTable } from "./table.js";

/**
 * `flotilla describe binding`: a ResourceBinding or ClusterResourceBinding as `kubectl describe`
 * lays out an object, with what a failover needs at hand: the placement (spec.clusters), the
 * graceful eviction tasks, each member's aggregated status, the conditions, and the scheduler's
 * diagnosis of its last decision (who was rejected by which plugin, how the others scored).
 */

const indent = (text: string, by = "  ") =>
  text
    .split("\n")
    .map((l) => (l ? by + l : l))
    .join("\n");

function fields(pairs: Array<[string, string | number | undefined]>): string {
  const kept = pairs.filter((p): p is [string, string | number] => p[1] !== undefined && p[1] !== "");
  const w = Math.max(0, ...kept.map(([k]) => k.length + 1));
  return kept.map(([k, v]) => `${`${k}:`.padEnd(w + 2)}${v}\n`).join("");
}

function section(title: string, body: string | undefined): string {
  return `${title}:${body ? `\n${indent(body.replace(/\n$/, ""))}\n` : "  <none>\n"}`;
}

const table = (headers: string[], rows: string[][]) => (rows.length ? renderTable({ headers, rows }) : undefined);

/** How long ago `t` was, as kubectl describe prints ages (`5m`, `2h`), or "" without a time. */
function ago(t: string | undefined, now: Date): string {
  if (!t) return "";
  const s = Math.max(0, Math.floor((now.getTime() - Date.parse(t)) / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.floor(s / 60)}m` : s < 172800 ? `${Math.floor(s / 3600)}h` : `${Math.floor(s / 86400)}d`;
}

/** One line of a member's reported workload status: the replica counts it carries. */
function statusSummary(st: unknown): string {
  if (!st || typeof st !== "object") return "";
  const s = st as Record<string, unknown>;
  const parts = ["replicas", "readyReplicas", "availableReplicas", "updatedReplicas"].filter((k) => typeof s[k] === "number").map((k) => `${k}=${s[k]}`);
  return parts.join(" ");
}

export function describeBinding(b: AnyResourceBinding, now: Date): string {
  const spec = b.spec ?? {};
  const status = b.status ?? {};
  const res = spec.resource ?? {};
  let out = fields([
    ["Name", b.metadata.name],
    ["Namespace", b.metadata.namespace],
    ["Kind", b.kind],
    ["Resource", `${res.apiVersion ?? ""} ${res.kind ?? ""} ${res.namespace ? `${res.namespace}/` : ""}${res.name ?? ""}`.trim()],
    ["Replicas", spec.replicas ?? 0],
    ["Scheduler", spec.schedulerName || "default-scheduler"],
    ["Created", b.metadata.creationTimestamp ? `${b.metadata.creationTimestamp} (${ago(b.metadata.creationTimestamp, now)} ago)` : undefined],
    ["Deleting", b.metadata.deletionTimestamp],
  ]);
  out += section(
    "Placement",
    table(
      ["CLUSTER", "REPLICAS"],
      (spec.clusters ?? []).map((c) => [c.name ?? "", String(c.replicas ?? 0)]),
    ),
  );
  out += section(
    "Eviction Tasks",
    table(
      ["FROM CLUSTER", "PRODUCER", "REASON", "PURGE MODE", "REPLICAS", "AGE", "MESSAGE"],
      (spec.gracefulEvictionTasks ?? []).map((t) => [t.fromCluster ?? "", t.producer ?? "", t.reason ?? "", t.purgeMode ?? "", t.replicas === undefined ? "" : String(t.replicas), ago(t.creationTimestamp, now), t.message ?? ""]),
    ),
  );
  out += section(
    "Aggregated Status",
    table(
      ["CLUSTER", "APPLIED", "HEALTH", "STATUS", "MESSAGE"],
      (status.aggregatedStatus ?? []).map((s) => [s.clusterName ?? "", s.applied ? "True" : "False", s.health || "Unknown", statusSummary(s.status), s.appliedMessage ?? ""]),
    ),
  );
  out += section(
    "Conditions",
    table(
      ["TYPE", "STATUS", "REASON", "AGE", "MESSAGE"],
      (status.conditions ?? []).map((c) => [c.type ?? "", c.status ?? "", c.reason ?? "", ago(c.lastTransitionTime, now), c.message ?? ""]),
    ),
  );
  const d = status.schedulingDiagnosis;
  if (!d) return out + section("Scheduling Diagnosis", undefined);
  let diag = fields([
    ["Time", d.time ? `${d.time} (${ago(d.time, now)} ago)` : undefined],
    ["Trigger", d.trigger],
    ["Result", d.result],
    ["Affinity", d.affinityName],
    ["Clusters", d.clustersTotal === undefined ? undefined : `${d.clustersTotal} in the snapshot, ${(d.feasible?.length ?? 0) + (d.feasibleOmitted ?? 0)} feasible`],
  ]);
  diag += section("Rejected", table(["PLUGIN", "REASON", "CLUSTERS"], (d.rejected ?? []).map((r) => [r.plugin ?? "", r.reason ?? "", (r.clusters ?? []).join(",")])));
  diag += section(
    "Feasible",
    table(
      ["CLUSTER", "SCORE", "AVAILABLE", "SELECTED", "REPLICAS"],
      (d.feasible ?? []).map((f) => [f.name ?? "", String(f.score ?? 0), f.availableReplicas === undefined ? "" : String(f.availableReplicas), f.selected ? "yes" : "no", f.replicas === undefined ? "" : String(f.replicas)]),
    ),
  );
  if (d.feasibleOmitted) diag += `(${d.feasibleOmitted} more feasible clusters not listed)\n`;
  if (d.attempts?.length) diag += section("Affinity Attempts", table(["AFFINITY", "ERROR"], d.attempts.map((a) => [a.affinityName ?? "", a.error || "-"])));
  return out + section("Scheduling Diagnosis", diag);
}
