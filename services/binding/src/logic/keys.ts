/** An object's identity as the store sees it (namespace "" when cluster-scoped). */
export interface Ref {
  gk: string;
  namespace: string;
  name: string;
}

/**
 * Queue keys name any object: "<group>/<Kind>|<namespace>|<name>". One format for every
 * controller here, since the detector's keys span every template kind and the other two
 * controllers each serve two kinds (PP and CPP, RB and CRB) through one code path.
 */
export function refKey(r: Ref): string {
  return `${r.gk}|${r.namespace}|${r.name}`;
}

export function parseRefKey(key: string): Ref {
  const a = key.indexOf("|");
  const b = key.indexOf("|", a + 1);
  if (a < 0 || b < 0) throw new Error(`malformed key ${JSON.stringify(key)}`);
  return { gk: key.slice(0, a), namespace: key.slice(a + 1, b), name: key.slice(b + 1) };
}
