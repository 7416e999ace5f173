import { RESOURCE_TYPES, apiVersionOf, parseApiVersion, type WakeUp } from "@flotilla/api";

/** Subject prefix of every object wake-up (`<prefix>.obj.<group|core>.<Kind>`). */
export const DEFAULT_PREFIX = "flotilla";
/** The one JetStream stream that holds the wake-ups. */
export const DEFAULT_STREAM = "FLOTILLA_OBJECTS";
/** Postgres NOTIFY channel the object store signals after each write. */
export const OUTBOX_CHANNEL = "flotilla_outbox";

/** Splits a store group/kind ("apps/Deployment", "/ConfigMap") into its parts. */
export function splitGroupKind(gk: string): { group: string; kind: string } {
  const i = gk.lastIndexOf("/");
  return i < 0 ? { group: "", kind: gk } : { group: gk.slice(0, i), kind: gk.slice(i + 1) };
}

/**
 * The subject wake-ups of one kind are published on: `<prefix>.obj.<group or "core">.<Kind>`.
 * Dots in the group become subject tokens ("flotilla.obj.work.karmada.io.ResourceBinding").
 */
export function subjectFor(gk: string, prefix: string = DEFAULT_PREFIX): string {
  const { group, kind } = splitGroupKind(gk);
  if (!kind || /[\s*>.]/.test(kind)) throw new Error(`invalid kind in group/kind ${JSON.stringify(gk)}`);
  if (/[\s*>]/.test(group) || group.startsWith(".") || group.endsWith(".") || group.includes("..")) {
    throw new Error(`invalid group in group/kind ${JSON.stringify(gk)}`);
  }
  return `${prefix}.obj.${group || "core"}.${kind}`;
}

/** The subject filter of the whole stream: `<prefix>.obj.>`. */
export function streamSubject(prefix: string = DEFAULT_PREFIX): string {
  return `${prefix}.obj.>`;
}

const versionByGk = new Map(RESOURCE_TYPES.map((r) => [`${r.group}/${r.kind}`, apiVersionOf(r)]));

/**
 * The apiVersion to report for an outbox row: the object's own apiVersion when it has
 * one, else the registered version of the kind, else "<group>/v1" ("v1" for core), so
 * that `groupKindOf` always recovers the group.
 */
export function apiVersionFor(gk: string, objectApiVersion?: string | null): string {
  if (objectApiVersion) return objectApiVersion;
  const known = versionByGk.get(gk);
  if (known) return known;
  const { group } = splitGroupKind(gk);
  return group ? `${group}/v1` : "v1";
}

/** The store group/kind ("apps/Deployment", "/ConfigMap") a wake-up is about. */
export function groupKindOf(w: Pick<WakeUp, "apiVersion" | "kind">): string {
  return `${parseApiVersion(w.apiVersion ?? "").group}/${w.kind ?? ""}`;
}
