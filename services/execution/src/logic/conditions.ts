import type { Condition } from "@flotilla/api";

/** Kubernetes timestamps: RFC 3339 with second precision. */
export function k8sTime(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function findCondition(conds: Condition[] | undefined, type: string): Condition | undefined {
  return (conds ?? []).find((c) => c.type === type);
}

/**
 * meta.SetStatusCondition: replaces the condition of the same type, keeping its
 * lastTransitionTime unless the status changed (then `now`). Returns a new list.
 */
export function setCondition(conds: Condition[] | undefined, c: Omit<Condition, "lastTransitionTime"> & { lastTransitionTime?: string }, now: Date): Condition[] {
  const list = [...(conds ?? [])];
  const i = list.findIndex((x) => x.type === c.type);
  const prev = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    ...c,
    lastTransitionTime: prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : (c.lastTransitionTime ?? k8sTime(now)),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}
