// Move-back after recovery (Flotilla's own, off by default): replicas a taint evicted from a
// cluster return to it once it has been healthy for a stabilization window. The opt-in is an
// annotation of the PropagationPolicy or ClusterPropagationPolicy (a Karmada manifest keeps
// working anywhere; Karmada ignores it), copied onto its bindings like the rest of the policy.
import type { TargetCluster } from "./types.js";
import type { FieldError } from "./errors.js";

/** `{"stabilizationSeconds": 600, "maxConcurrent": 1}` on a (Cluster)PropagationPolicy, and on its bindings. */
export const MoveBackAnnotation = "failover.flotilla.io/move-back";
/** On a binding: its placement just before the first taint eviction, `[{name, replicas}]`. */
export const PlacementBeforeFailoverAnnotation = "failover.flotilla.io/placement-before-failover";
/** On a binding moving back: `{replicas, from, startedAt}` (the placement it surged from). */
export const MoveBackSurgeAnnotation = "failover.flotilla.io/move-back-surge";
/** On a binding moving back, so that the fleet's move-backs can be counted by label selector. */
export const MovingBackLabel = "failover.flotilla.io/moving-back";
/** On a binding whose move-back was given up: when (RFC 3339), so the window starts again from then. */
export const MoveBackFailedAnnotation = "failover.flotilla.io/move-back-failed-at";

export interface MoveBackConfig {
  /** How long every cluster to return to must have been Ready and untainted. */
  stabilizationSeconds: number;
  /** At most this many bindings moving back at once, across the fleet. */
  maxConcurrent: number;
}

const MAX_SECONDS = 7 * 24 * 3600;

/** The annotation's value, or the field errors that make it invalid (`path` names the annotation). */
export function parseMoveBack(value: string, path = `metadata.annotations[${MoveBackAnnotation}]`): { config?: MoveBackConfig; errors: FieldError[] } {
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch {
    return { errors: [{ field: path, reason: "FieldValueInvalid", message: `must be a JSON object such as {"stabilizationSeconds":600,"maxConcurrent":1}` }] };
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return { errors: [{ field: path, reason: "FieldValueTypeInvalid", message: "must be a JSON object" }] };
  const o = raw as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const k of Object.keys(o)) if (k !== "stabilizationSeconds" && k !== "maxConcurrent") errors.push({ field: `${path}.${k}`, reason: "FieldValueUnknown", message: `unknown field "${k}" (known: stabilizationSeconds, maxConcurrent)` });
  const int = (k: string, min: number, max: number, def?: number): number => {
    const v = o[k];
    if (v === undefined) {
      if (def === undefined) errors.push({ field: `${path}.${k}`, reason: "FieldValueRequired", message: "Required value" });
      return def ?? 0;
    }
    if (typeof v !== "number" || !Number.isInteger(v)) errors.push({ field: `${path}.${k}`, reason: "FieldValueTypeInvalid", message: "must be an integer" });
    else if (v < min || v > max) errors.push({ field: `${path}.${k}`, reason: "FieldValueInvalid", message: `must be between ${min} and ${max}` });
    return typeof v === "number" ? v : 0;
  };
  const config = { stabilizationSeconds: int("stabilizationSeconds", 0, MAX_SECONDS), maxConcurrent: int("maxConcurrent", 1, 1000, 1) };
  return errors.length ? { errors } : { config, errors };
}

/** The move-back setting of a policy or binding, when it has a valid one. */
export function moveBackOf(annotations: Record<string, string> | undefined): MoveBackConfig | undefined {
  const v = annotations?.[MoveBackAnnotation];
  return v === undefined ? undefined : parseMoveBack(v).config;
}

/** A placement annotation's value read back (undefined when absent or unreadable). */
export function placementOf(value: string | undefined): { name: string; replicas: number }[] | undefined {
  if (value === undefined) return undefined;
  try {
    return placementFrom(JSON.parse(value));
  } catch {
    return undefined;
  }
}

/** A placement as decoded JSON, `[{name, replicas}]` (undefined when it is not one). */
export function placementFrom(v: unknown): { name: string; replicas: number }[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: { name: string; replicas: number }[] = [];
  for (const t of v as unknown[]) {
    const x = t as { name?: unknown; replicas?: unknown };
    if (typeof x?.name !== "string" || (x.replicas !== undefined && typeof x.replicas !== "number")) return undefined;
    out.push({ name: x.name, replicas: typeof x.replicas === "number" ? x.replicas : 0 });
  }
  return out;
}

/** A placement as the annotation stores it (sorted by cluster name: one placement, one text). */
export function placementText(clusters: readonly TargetCluster[] | undefined): string {
  return JSON.stringify([...(clusters ?? [])].map((c) => ({ name: c.name ?? "", replicas: c.replicas ?? 0 })).sort((a, b) => a.name.localeCompare(b.name)));
}
