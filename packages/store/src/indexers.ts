import {
  AppliedClusterOverrides,
  AppliedOverrides,
  BindingDependedByLabelPrefix,
  BindingDependenciesAnnotation,
  ClusterResourceBindingAnnotationKey,
  KARMADA,
  ResourceBindingNameAnnotationKey,
  ResourceBindingNamespaceAnnotationKey,
  groupKind,
  type KubeObject,
} from "@flotilla/api";
import type { Indexer } from "./store.js";

/** Index entry of a binding that lists `cluster` in `spec.clusters`. */
export function bindingClusterIndex(cluster: string): string {
  return `cluster:${cluster}`;
}

/** Index entry of a binding with a graceful-eviction task whose `fromCluster` is `cluster`. */
export function bindingEvictingIndex(cluster: string): string {
  return `evicting:${cluster}`;
}

/** Index entry of every binding that has at least one graceful-eviction task. */
export const BINDING_WITH_EVICTION_TASKS_INDEX = "evicting";

/** Index entry of every binding with a placement to move back to (move-back, Flotilla's). */
export const BINDING_WITH_MOVE_BACK_INDEX = "move-back";

/** Index entry of every binding whose policy sets `failover.application`. */
export const BINDING_WITH_APPLICATION_FAILOVER_INDEX = "app-failover";

/**
 * Index entry of a binding whose `resourcebinding.karmada.io/dependencies` annotation lists the
 * object: `dependency:<apiVersion>/<kind>/<namespace>/<name>` (the dependencies distributor's
 * record of what the binding's workload references, as Karmada writes it).
 */
export function bindingDependencyIndex(r: { apiVersion?: string; kind?: string; namespace?: string; name?: string }): string {
  return `dependency:${r.apiVersion ?? ""}/${r.kind ?? ""}/${r.namespace ?? ""}/${r.name ?? ""}`;
}

/**
 * Index entry of an attached binding labelled as required by a binding
 * (`resourcebinding.karmada.io/depended-by-<hash>`, whatever the label's value): `depended-by:<hash>`.
 * The label is a key of its own per requiring binding, which the labels' index cannot find by key
 * alone; this finds the attached bindings of a binding that is gone (its permanent id unknown).
 */
export function bindingDependedByIndex(label: string): string {
  return `depended-by:${label.slice(BindingDependedByLabelPrefix.length)}`;
}

/** The JSON array an annotation holds, or none when it is absent or not an array (written by hand). */
function jsonArray(value: string | undefined): unknown[] {
  if (!value) return [];
  try {
    const v: unknown = JSON.parse(value);
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The `dependency:` entries of a binding's dependencies annotation (entries without a kind or name skipped). */
function dependencyEntries(obj: KubeObject): string[] {
  const out: string[] = [];
  for (const d of jsonArray(obj.metadata.annotations?.[BindingDependenciesAnnotation])) {
    if (!isRecord(d) || !str(d.kind) || !str(d.name)) continue;
    out.push(bindingDependencyIndex({ apiVersion: str(d.apiVersion), kind: str(d.kind), namespace: str(d.namespace), name: str(d.name) }));
  }
  return out;
}

/**
 * The secondary-index entries of a ResourceBinding or ClusterResourceBinding: `cluster:<name>`
 * for every cluster in `spec.clusters`, `evicting:<name>` for every graceful-eviction task's
 * `fromCluster`, `evicting` when it has any task, `app-failover` when it has
 * `spec.failover.application`, and `dependency:…` for every dependency its
 * `resourcebinding.karmada.io/dependencies` annotation lists (bindingDependencyIndex), and
 * `depended-by:…` for every depended-by label (bindingDependedByIndex). Query with
 * `store.list(gk, { index: bindingClusterIndex("member1") })`.
 */
export const bindingIndexer: Indexer = (obj: KubeObject) => {
  const keys: string[] = [];
  for (const c of (obj.spec?.clusters ?? []) as { name?: string }[]) if (c?.name) keys.push(bindingClusterIndex(c.name));
  const tasks = (obj.spec?.gracefulEvictionTasks ?? []) as { fromCluster?: string }[];
  if (tasks.length) keys.push(BINDING_WITH_EVICTION_TASKS_INDEX);
  for (const t of tasks) if (t?.fromCluster) keys.push(bindingEvictingIndex(t.fromCluster));
  if ((obj.spec?.failover as { application?: unknown } | undefined)?.application) keys.push(BINDING_WITH_APPLICATION_FAILOVER_INDEX);
  if (obj.metadata.annotations?.["failover.flotilla.io/placement-before-failover"] !== undefined) keys.push(BINDING_WITH_MOVE_BACK_INDEX);
  keys.push(...dependencyEntries(obj));
  for (const l of Object.keys(obj.metadata.labels ?? {})) if (l.startsWith(BindingDependedByLabelPrefix)) keys.push(bindingDependedByIndex(l));
  return keys;
};

/** Index entry of a Work that belongs to a binding: `binding:<namespace>/<name>` (a ResourceBinding) or `binding:<name>` (a ClusterResourceBinding). */
export function workBindingIndex(b: { namespace?: string; name: string }): string {
  return b.namespace ? `binding:${b.namespace}/${b.name}` : `binding:${b.name}`;
}

/** The binding a `binding:` index entry names, or undefined for another entry. */
export function bindingOfWorkIndex(entry: string): { namespace: string; name: string } | undefined {
  if (!entry.startsWith("binding:")) return undefined;
  const v = entry.slice("binding:".length);
  const i = v.indexOf("/");
  return i < 0 ? { namespace: "", name: v } : { namespace: v.slice(0, i), name: v.slice(i + 1) };
}

/**
 * Index entry of a Work whose applied-overrides annotations name an override policy:
 * `override:<namespace>/<name>` for an OverridePolicy (`policy.karmada.io/applied-overrides`;
 * the policy is in the namespace of the Work's template), `cluster-override:<name>` for a
 * ClusterOverridePolicy (`policy.karmada.io/applied-cluster-overrides`).
 */
export function workAppliedOverrideIndex(p: { namespace?: string; name: string }): string {
  return p.namespace ? `override:${p.namespace}/${p.name}` : `cluster-override:${p.name}`;
}

/** The namespace of a Work's template: its manifest's, or its ResourceBinding's. */
function templateNamespaceOf(obj: KubeObject): string {
  const manifests = (obj.spec as { workload?: { manifests?: unknown } } | undefined)?.workload?.manifests;
  const m = Array.isArray(manifests) ? manifests[0] : undefined;
  const ns = isRecord(m) && isRecord(m.metadata) ? str(m.metadata.namespace) : "";
  return ns || (obj.metadata.annotations?.[ResourceBindingNamespaceAnnotationKey] ?? "");
}

/** The policy names of an applied-overrides annotation (`[{"policyName","overriders"}]`). */
function appliedPolicyNames(value: string | undefined): string[] {
  return jsonArray(value)
    .map((e) => (isRecord(e) ? str(e.policyName) : ""))
    .filter((n) => n);
}

/**
 * The binding a Work belongs to, from the annotations the binding controller writes on it, and
 * the override policies it was rendered with (workAppliedOverrideIndex).
 */
export const workIndexer: Indexer = (obj: KubeObject) => {
  const a = obj.metadata.annotations ?? {};
  const keys: string[] = [];
  if (a[ResourceBindingNamespaceAnnotationKey] && a[ResourceBindingNameAnnotationKey]) {
    keys.push(workBindingIndex({ namespace: a[ResourceBindingNamespaceAnnotationKey], name: a[ResourceBindingNameAnnotationKey] }));
  } else if (a[ClusterResourceBindingAnnotationKey]) keys.push(workBindingIndex({ name: a[ClusterResourceBindingAnnotationKey] }));
  for (const name of appliedPolicyNames(a[AppliedClusterOverrides])) keys.push(workAppliedOverrideIndex({ name }));
  const ops = appliedPolicyNames(a[AppliedOverrides]);
  if (ops.length) {
    const namespace = templateNamespaceOf(obj);
    if (namespace) for (const name of ops) keys.push(workAppliedOverrideIndex({ namespace, name }));
  }
  return keys;
};

/**
 * The indexers every service uses, and the store's default when it is given none: index
 * entries are computed by whoever writes an object, so all writers must agree on them.
 */
export const STANDARD_INDEXERS: Readonly<Record<string, Indexer>> = Object.freeze({
  [groupKind(KARMADA.resourceBinding)]: bindingIndexer,
  [groupKind(KARMADA.clusterResourceBinding)]: bindingIndexer,
  [groupKind(KARMADA.work)]: workIndexer,
});
