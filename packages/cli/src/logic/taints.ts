import { TaintClusterUnscheduler } from "@flotilla/api";

/** A Cluster's spec.taints entry. */
export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export interface TaintChanges {
  add: Taint[];
  /** `key:Effect-` removes that taint, `key-` every taint of the key. */
  remove: Array<{ key: string; effect?: string }>;
}

const EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
// a qualified name as Kubernetes validates label keys: optional DNS prefix, then a name of at most 63
const KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

export class TaintError extends Error {
  override readonly name = "TaintError";
}

/** kubectl taint's arguments: `key=value:Effect`, `key:Effect` to add; `key:Effect-`, `key-` to remove. */
export function parseTaints(args: readonly string[]): TaintChanges {
  const out: TaintChanges = { add: [], remove: [] };
  for (const a of args) {
    if (a.endsWith("-")) {
      const spec = a.slice(0, -1);
      const [key, effect] = spec.split(":") as [string, string?];
      if (!KEY.test(key)) throw new TaintError(`invalid taint key ${JSON.stringify(key)} in ${JSON.stringify(a)}`);
      if (effect !== undefined && !EFFECTS.includes(effect)) throw new TaintError(`invalid taint effect ${JSON.stringify(effect)} in ${JSON.stringify(a)}: one of ${EFFECTS.join(", ")}`);
      out.remove.push({ key, ...(effect ? { effect } : {}) });
      continue;
    }
    const colon = a.lastIndexOf(":");
    if (colon < 0) throw new TaintError(`invalid taint ${JSON.stringify(a)}: want key=value:Effect, key:Effect, or key:Effect- to remove`);
    const [kv, effect] = [a.slice(0, colon), a.slice(colon + 1)];
    if (!EFFECTS.includes(effect)) throw new TaintError(`invalid taint effect ${JSON.stringify(effect)} in ${JSON.stringify(a)}: one of ${EFFECTS.join(", ")}`);
    const eq = kv.indexOf("=");
    const key = eq < 0 ? kv : kv.slice(0, eq);
    const value = eq < 0 ? undefined : kv.slice(eq + 1);
    if (!KEY.test(key)) throw new TaintError(`invalid taint key ${JSON.stringify(key)} in ${JSON.stringify(a)}`);
    if (value !== undefined && !VALUE.test(value)) throw new TaintError(`invalid taint value ${JSON.stringify(value)} in ${JSON.stringify(a)}`);
    if (out.add.some((t) => t.key === key && t.effect === effect)) throw new TaintError(`the taint ${key}:${effect} is given twice`);
    out.add.push({ key, ...(value ? { value } : {}), effect });
  }
  if (!out.add.length && !out.remove.length) throw new TaintError("no taint given: key=value:Effect to add, key:Effect- to remove");
  return out;
}

const show = (t: Taint) => `${t.key}${t.value ? `=${t.value}` : ""}:${t.effect}`;

/**
 * The cluster's taints after the changes (identity is key and effect), as kubectl taint does: a
 * taint already there with another value needs `overwrite`; removing a taint that is not there
 * is an error naming it. `changed` is false when nothing would change.
 */
export function applyTaints(cluster: string, current: readonly Taint[], c: TaintChanges, o: { overwrite?: boolean } = {}): { taints: Taint[]; changed: boolean } {
  let taints = [...current];
  let changed = false;
  for (const r of c.remove) {
    const kept = taints.filter((t) => !(t.key === r.key && (r.effect === undefined || t.effect === r.effect)));
    if (kept.length === taints.length) throw new TaintError(`taint ${JSON.stringify(r.effect ? `${r.key}:${r.effect}` : r.key)} not found on cluster ${cluster}`);
    taints = kept;
    changed = true;
  }
  for (const t of c.add) {
    const i = taints.findIndex((x) => x.key === t.key && x.effect === t.effect);
    if (i < 0) {
      taints.push(t);
      changed = true;
    } else if ((taints[i]!.value ?? "") !== (t.value ?? "")) {
      if (!o.overwrite) throw new TaintError(`cluster ${cluster} already has the taint ${show(taints[i]!)}; use --overwrite to make it ${show(t)}`);
      taints[i] = t;
      changed = true;
    }
  }
  return { taints, changed };
}

/** karmadactl cordon: the unschedulable NoSchedule taint. */
export const CORDON_TAINT: Taint = { key: TaintClusterUnscheduler, effect: "NoSchedule" };
