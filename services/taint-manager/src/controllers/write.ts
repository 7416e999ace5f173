import { isConflict, type KubeObject } from "@flotilla/api";
import type { ObjectRef, ObjectStore } from "@flotilla/store";

/**
 * Read-modify-write that never loses a concurrent change and never waits out a backoff on a
 * conflict: `build` gets a copy of the current object (starting with `first` when the caller
 * has just read it) and returns the desired object or undefined for "nothing to do"; the write
 * carries the resourceVersion it was built from, and on a conflict the object is read again
 * and `build` decides again, at once. Returns the stored object (undefined when it is gone)
 * and whether this call wrote it.
 */
export async function writeWithRetry<T extends KubeObject>(
  store: ObjectStore,
  ref: ObjectRef,
  first: T | undefined,
  build: (cur: T) => T | undefined,
  o: { status?: boolean; attempts?: number } = {},
): Promise<{ obj: T | undefined; written: boolean }> {
  let cur = first;
  for (let attempt = 1; ; attempt++) {
    cur ??= await store.get<T>(ref);
    if (!cur) return { obj: undefined, written: false };
    const next = build(structuredClone(cur));
    if (!next) return { obj: cur, written: false };
    next.metadata.resourceVersion = cur.metadata.resourceVersion;
    try {
      const obj = o.status ? await store.updateStatus(next) : await store.update(next);
      return { obj, written: true };
    } catch (e) {
      if (!isConflict(e) || attempt >= (o.attempts ?? 10)) throw e;
      cur = undefined;
    }
  }
}
