import { GK, type AnyResourceBinding } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import type { ClusterReader, EventRecorder, ListOptions, ObjectRef, ObjectStore } from "@flotilla/store";
import type { Config } from "../config.js";

/** A binding's key: `rb/<namespace>/<name>` or `crb/<name>`. */
export function bindingKey(b: { kind?: string; namespace?: string; name?: string }): string {
  return b.kind === "ClusterResourceBinding" ? `crb/${b.name}` : `rb/${b.namespace}/${b.name}`;
}

export function keyOf(b: Pick<AnyResourceBinding, "kind" | "metadata">): string {
  return bindingKey({ kind: b.kind, namespace: b.metadata.namespace, name: b.metadata.name });
}

export function parseBindingKey(key: string): ObjectRef | undefined {
  const p = key.split("/");
  if (p[0] === "rb" && p.length === 3 && p[1] && p[2]) return { gk: GK.resourceBinding, namespace: p[1], name: p[2] };
  if (p[0] === "crb" && p.length === 2 && p[1]) return { gk: GK.clusterResourceBinding, namespace: "", name: p[1] };
  return undefined;
}

export function refString(r: ObjectRef): string {
  return r.namespace ? `${r.namespace}/${r.name}` : r.name;
}

/** What every controller of the eviction service works with. */
export interface ControllerDeps {
  store: ObjectStore;
  clusters: ClusterReader;
  cfg: Config;
  events: EventRecorder;
  now: () => Date;
  log: Logger;
}

/** The ResourceBindings and ClusterResourceBindings that match `o` (an index entry, a label selector), both kinds through one call. */
export async function listBindings(store: ObjectStore, o: Pick<ListOptions, "index" | "labelSelector">): Promise<AnyResourceBinding[]> {
  const [rbs, crbs] = await Promise.all([store.list<AnyResourceBinding>(GK.resourceBinding, o), store.list<AnyResourceBinding>(GK.clusterResourceBinding, o)]);
  return [...rbs.items, ...crbs.items];
}
