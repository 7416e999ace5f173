import { microTime, type KubeObject } from "@flotilla/api";

export const LEASE_NAMESPACE = "karmada-cluster";

/**
 * The cluster's Lease (coordination.k8s.io/v1, karmada-cluster/<cluster>) renewed at `now`: a
 * new one when none exists, else the one read with renewTime moved (and the holder and duration
 * set), keeping its resourceVersion so a concurrent writer conflicts.
 */
export function renewedLease(cluster: string, existing: KubeObject | undefined, now: Date, durationSeconds: number): KubeObject {
  const spec = { holderIdentity: cluster, leaseDurationSeconds: durationSeconds, renewTime: microTime(now) };
  if (!existing) {
    return { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: cluster, namespace: LEASE_NAMESPACE }, spec: { ...spec, acquireTime: microTime(now) } } as KubeObject;
  }
  return { ...existing, spec: { ...((existing as { spec?: object }).spec ?? {}), ...spec } } as KubeObject;
}

/** Upstream's renew interval: a quarter of the lease duration (karmada-agent: 40 s lease, renewed every 10 s). */
export function renewIntervalMs(durationSeconds: number, fraction = 0.25): number {
  return Math.max(1, Math.round(durationSeconds * 1000 * fraction));
}
