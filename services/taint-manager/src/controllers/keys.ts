import { bindingKey, bindingRefOfKey, type AnyResourceBinding, type KeyRef } from "@flotilla/api";

/** The binding-eviction controller's key: one binding on one cluster, `<cluster>/<binding key>`. */
export function evictionKey(cluster: string, b: Pick<AnyResourceBinding, "metadata">): string {
  return `${cluster}/${bindingKey(b)}`;
}

export function parseEvictionKey(key: string): { cluster: string; binding: KeyRef } | undefined {
  const i = key.indexOf("/");
  if (i <= 0) return undefined;
  const binding = bindingRefOfKey(key.slice(i + 1));
  return binding ? { cluster: key.slice(0, i), binding } : undefined;
}
