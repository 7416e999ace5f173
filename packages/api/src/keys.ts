/**
 * Controller queue keys: the one codec for each shape of key.
 *
 * - one kind, or a binding of either scope: `namespace/name`, or `name` when cluster-scoped
 *   (`objectKeyOf`, `bindingKey`/`bindingRefOfKey`; a name never holds "/", so a binding's key
 *   alone tells ResourceBinding from ClusterResourceBinding and both share one queue and one
 *   code path). A wake-up's own object has the same key (the runtime's `objectKey`);
 * - many kinds in one queue (the resource detector's templates): `group/Kind|namespace|name`
 *   (`kindKey`/`parseKindKey`).
 */
import { BadRequestError } from "./errors.js";
import { GK } from "./resources.js";

/** Where an object is stored: its group/kind ("work.karmada.io/ResourceBinding"), namespace ("" when cluster-scoped) and name. */
export interface KeyRef {
  gk: string;
  namespace: string;
  name: string;
}

/** `namespace/name`, or `name` for a cluster-scoped object. */
export function objectKeyOf(meta: { namespace?: string; name?: string }): string {
  return meta.namespace ? `${meta.namespace}/${meta.name ?? ""}` : (meta.name ?? "");
}

/** A binding's key: `namespace/name` for a ResourceBinding, `name` for a ClusterResourceBinding. */
export function bindingKey(b: { metadata: { namespace?: string; name?: string } }): string {
  return objectKeyOf(b.metadata);
}

/** The binding a key names (undefined for a malformed key: empty parts, more than one "/"). */
export function bindingRefOfKey(key: string): KeyRef | undefined {
  const parts = key.split("/");
  if (parts.some((p) => !p)) return undefined;
  if (parts.length === 1) return { gk: GK.clusterResourceBinding, namespace: "", name: parts[0]! };
  if (parts.length === 2) return { gk: GK.resourceBinding, namespace: parts[0]!, name: parts[1]! };
  return undefined;
}

/** The key of an object in a queue of many kinds: `group/Kind|namespace|name`. */
export function kindKey(r: { gk: string; namespace?: string; name: string }): string {
  return `${r.gk}|${r.namespace ?? ""}|${r.name}`;
}

/** The object a `kindKey` names; a malformed key (none of those is ever queued) throws. */
export function parseKindKey(key: string): KeyRef {
  const a = key.indexOf("|");
  const b = key.indexOf("|", a + 1);
  if (a <= 0 || b < 0) throw new BadRequestError(`malformed key ${JSON.stringify(key)}`);
  return { gk: key.slice(0, a), namespace: key.slice(a + 1, b), name: key.slice(b + 1) };
}

/** Orders two resourceVersions (decimal strings that grow in commit order): negative, 0 or positive. */
export function compareResourceVersions(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
