/** JSON values as they come off the wire. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * RFC 7386 JSON merge patch: objects merge key by key, `null` removes a key, anything else
 * (arrays included) replaces. Returns a new value; neither input is modified.
 */
export function mergePatch(target: unknown, patch: unknown): Json {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/**
 * Server-side apply, simplified to one owner per field manager: the applied configuration is
 * merged onto the live object, and fields this manager applied last time but left out now are
 * removed. Lists are atomic (replaced whole). `null` in the configuration removes the field.
 */
export function applyConfiguration(live: unknown, lastApplied: unknown, applied: unknown): Json {
  if (!isObject(applied)) return clone(applied);
  const out: JsonObject = isObject(live) ? { ...live } : {};
  if (isObject(lastApplied)) {
    for (const k of Object.keys(lastApplied)) if (!(k in applied)) delete out[k];
  }
  for (const [k, v] of Object.entries(applied)) {
    if (v === null) delete out[k];
    else out[k] = applyConfiguration(out[k], isObject(lastApplied) ? lastApplied[k] : undefined, v);
  }
  return out;
}

/** A deep copy of plain JSON data (`undefined` becomes null, as on the wire). */
export function clone<T>(v: T): T & Json {
  if (v === undefined) return null as T & Json;
  if (typeof v !== "object" || v === null) return v as T & Json;
  return structuredClone(v) as T & Json;
}

/** Deep equality of JSON values (key order does not matter). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (!jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}
