import { isJsonObject, type Json, type JsonObject } from "@flotilla/api";

/**
 * Server-side apply, simplified to one owner per field manager: the applied configuration is
 * merged onto the live object, and fields this manager applied last time but left out now are
 * removed. Lists are atomic (replaced whole). `null` in the configuration removes the field.
 */
export function applyConfiguration(live: unknown, lastApplied: unknown, applied: unknown): Json {
  if (!isJsonObject(applied)) return clone(applied);
  const out: JsonObject = isJsonObject(live) ? { ...live } : {};
  if (isJsonObject(lastApplied)) {
    for (const k of Object.keys(lastApplied)) if (!(k in applied)) delete out[k];
  }
  for (const [k, v] of Object.entries(applied)) {
    if (v === null) delete out[k];
    else out[k] = applyConfiguration(out[k], isJsonObject(lastApplied) ? lastApplied[k] : undefined, v);
  }
  return out;
}

/** A deep copy of plain JSON data (`undefined` becomes null, as on the wire). */
export function clone<T>(v: T): T & Json {
  if (v === undefined) return null as T & Json;
  if (typeof v !== "object" || v === null) return v as T & Json;
  return structuredClone(v) as T & Json;
}
