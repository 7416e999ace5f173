import { GK, type AnyResourceBinding } from "@flotilla/api";
import type { ObjectRef } from "@flotilla/store";

/** A binding's key: `rb/<namespace>/<name>` or `crb/<name>`. */
export function bindingKey(b: Pick<AnyResourceBinding, "kind" | "metadata">): string {
  return b.kind === "ClusterResourceBinding" ? `crb/${b.metadata.name}` : `rb/${b.metadata.namespace}/${b.metadata.name}`;
}

export function parseBindingKey(key: string): ObjectRef | undefined {
  const p = key.split("/");
  if (p[0] === "rb" && p.length === 3 && p[1] && p[2]) return { gk: GK.resourceBinding, namespace: p[1], name: p[2] };
  if (p[0] === "crb" && p.length === 2 && p[1]) return { gk: GK.clusterResourceBinding, namespace: "", name: p[1] };
  return undefined;
}

/** The binding-eviction controller's key: one binding on one cluster, `<cluster>/<binding key>`. */
export function evictionKey(cluster: string, b: Pick<AnyResourceBinding, "kind" | "metadata">): string {
  return `${cluster}/${bindingKey(b)}`;
}

export function parseEvictionKey(key: string): { cluster: string; binding: ObjectRef } | undefined {
  const i = key.indexOf("/");
  if (i <= 0) return undefined;
  const binding = parseBindingKey(key.slice(i + 1));
  return binding ? { cluster: key.slice(0, i), binding } : undefined;
}

export function refString(r: ObjectRef): string {
  return r.namespace ? `${r.namespace}/${r.name}` : r.name;
}
