import { KARMADA, groupKind, type KubeObject } from "@flotilla/api";
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

/**
 * The secondary-index entries of a ResourceBinding or ClusterResourceBinding: `cluster:<name>`
 * for every cluster in `spec.clusters`, `evicting:<name>` for every graceful-eviction task's
 * `fromCluster`, and `evicting` when it has any task. Query with
 * `store.list(gk, { index: bindingClusterIndex("member1") })`.
 */
export const bindingIndexer: Indexer = (obj: KubeObject) => {
  const keys: string[] = [];
  for (const c of (obj.spec?.clusters ?? []) as { name?: string }[]) if (c?.name) keys.push(bindingClusterIndex(c.name));
  const tasks = (obj.spec?.gracefulEvictionTasks ?? []) as { fromCluster?: string }[];
  if (tasks.length) keys.push(BINDING_WITH_EVICTION_TASKS_INDEX);
  for (const t of tasks) if (t?.fromCluster) keys.push(bindingEvictingIndex(t.fromCluster));
  return keys;
};

/**
 * The indexers every service uses, and the store's default when it is given none: index
 * entries are computed by whoever writes an object, so all writers must agree on them.
 */
export const STANDARD_INDEXERS: Readonly<Record<string, Indexer>> = Object.freeze({
  [groupKind(KARMADA.resourceBinding)]: bindingIndexer,
  [groupKind(KARMADA.clusterResourceBinding)]: bindingIndexer,
});
