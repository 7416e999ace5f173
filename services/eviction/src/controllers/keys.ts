import { KARMADA, groupKind, type AnyResourceBinding } from "@flotilla/api";
import type { ObjectRef } from "@flotilla/store";

export const GK = {
  cluster: groupKind(KARMADA.cluster),
  resourceBinding: groupKind(KARMADA.resourceBinding),
  clusterResourceBinding: groupKind(KARMADA.clusterResourceBinding),
} as const;

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
