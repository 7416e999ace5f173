import type { Cluster } from "@flotilla/api";

/** The Cluster spec fields the agent owns: everything else (taints, labels, provider…) is left to whoever set it. */
export interface OwnedSpec {
  syncMode: "Pull";
}

export const OWNED_SPEC: OwnedSpec = { syncMode: "Pull" };

/**
 * What registering does with the Cluster as it is (undefined: it does not exist): create it with
 * the owned fields, update it when an owned field differs (keeping every other field and the
 * resourceVersion read), or nothing. Idempotent: registering twice writes once.
 */
export function registration(name: string, existing: Cluster | undefined, owned: OwnedSpec = OWNED_SPEC): { action: "create" | "update"; cluster: Cluster } | { action: "none" } {
  if (!existing) {
    return { action: "create", cluster: { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name }, spec: { ...owned } } as Cluster };
  }
  const spec = (existing.spec ?? {}) as Record<string, unknown>;
  const differs = (Object.keys(owned) as (keyof OwnedSpec)[]).some((k) => spec[k] !== owned[k]);
  if (!differs) return { action: "none" };
  return { action: "update", cluster: { ...existing, spec: { ...existing.spec, ...owned } } as Cluster };
}
