import {
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
 * The secondary-index entries of a ResourceBinding or ClusterResourceBinding: `cluster:<name>`
 * for every cluster in `spec.clusters`, `evicting:<name>` for every graceful-eviction task's
 * `fromCluster`, `evicting` when it has any task, and `app-failover` when it has
 * `spec.failover.application`. Query with
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

/** The binding a Work belongs to, from the annotations the binding controller writes on it. */
export const workIndexer: Indexer = (obj: KubeObject) => {
  const a = obj.metadata.annotations ?? {};
  if (a[ResourceBindingNamespaceAnnotationKey] && a[ResourceBindingNameAnnotationKey]) {
    return [workBindingIndex({ namespace: a[ResourceBindingNamespaceAnnotationKey], name: a[ResourceBindingNameAnnotationKey] })];
  }
  if (a[ClusterResourceBindingAnnotationKey]) return [workBindingIndex({ name: a[ClusterResourceBindingAnnotationKey] })];
  return [];
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
