import { GK, type AnyResourceBinding } from "@flotilla/api";

/** Where a binding is stored: ResourceBindings are namespaced, ClusterResourceBindings are not. */
export interface BindingRef {
  gk: string;
  namespace: string;
  name: string;
}

/**
 * The controller key of a binding: `namespace/name` for a ResourceBinding, `name` for a
 * ClusterResourceBinding. A name never contains "/", so the key alone tells the kind, and both
 * kinds share one queue and one code path.
 */
export function bindingKey(b: Pick<AnyResourceBinding, "metadata">): string {
  const ns = b.metadata.namespace ?? "";
  return ns ? `${ns}/${b.metadata.name ?? ""}` : (b.metadata.name ?? "");
}

export function refOfKey(key: string): BindingRef {
  const i = key.indexOf("/");
  return i < 0 ? { gk: GK.clusterResourceBinding, namespace: "", name: key } : { gk: GK.resourceBinding, namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** Compares two resourceVersions (decimal strings that grow with commit order). */
export function compareRv(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
