import { bindingKey, bindingRefOfKey, type AnyResourceBinding } from "@flotilla/api";

/** The binding-eviction controller's key: one binding on one cluster, `<cluster>/<binding key>`. */
export function evictionKey(cluster: string, b: Pick<AnyResourceBinding, "metadata">): string {
  return `${cluster}/${bindingKey(b)}`;
}

/** The cluster and the binding's key an eviction key names (undefined when the binding part is not a binding key). */
export function parseEvictionKey(key: string): { cluster: string; binding: string } | undefined {
  const i = key.indexOf("/");
  if (i <= 0) return undefined;
  const binding = key.slice(i + 1);
  return bindingRefOfKey(binding) ? { cluster: key.slice(0, i), binding } : undefined;
}
