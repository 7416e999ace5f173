import { GK, type AnyResourceBinding } from "@flotilla/api";
import type { ListOptions, ObjectStore } from "./store.js";

/** ResourceBindings and ClusterResourceBindings: one code path for both scopes. */
export const BINDING_KINDS = [GK.resourceBinding, GK.clusterResourceBinding] as const;

/** The bindings of both scopes that match `o` (an index entry, a label selector), read together. */
export async function listBindings(store: Pick<ObjectStore, "list">, o: Pick<ListOptions, "index" | "labelSelector"> = {}): Promise<AnyResourceBinding[]> {
  const [rbs, crbs] = await Promise.all(BINDING_KINDS.map((gk) => store.list<AnyResourceBinding>(gk, o)));
  return [...rbs!.items, ...crbs!.items];
}
