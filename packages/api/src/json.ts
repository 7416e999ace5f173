import { BadRequestError } from "./errors.js";
import { FORBIDDEN_KEYS, forbiddenKeyError } from "./document.js";

/** JSON values as they come off the wire. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Deep equality of JSON values: key order does not matter, and an absent member equals an undefined one (neither is on the wire). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => jsonEqual(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!jsonEqual(ao[k], bo[k])) return false;
  return true;
}

/** A JSON-clean copy (no undefined members), so a store compares and keeps exactly what is meant. */
export function jsonClean<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/**
 * RFC 7386 JSON merge patch: objects merge key by key, `null` removes a key, anything else
 * (arrays included) replaces. Returns a new value; neither input is modified. A key that could
 * reach an object's prototype (`__proto__`) is refused (BadRequestError), never assigned.
 */
export function mergePatch(target: unknown, patch: unknown): Json {
  if (!isJsonObject(patch)) return patch === undefined ? null : (structuredClone(patch) as Json);
  const out: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (FORBIDDEN_KEYS.has(k)) throw new BadRequestError(`${JSON.stringify(k)} may not be used as a field name`, [forbiddenKeyError(k, k)]);
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}
