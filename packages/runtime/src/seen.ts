interface Entry {
  /** The last version this replica wrote. */
  wrote?: string;
  /** Every version up to this one has been reconciled. */
  upTo?: bigint;
  /** The generation of the newest version reconciled. */
  generation?: string;
}

const asRv = (rv: string | undefined): bigint | undefined => (rv && /^\d+$/.test(rv) ? BigInt(rv) : undefined);

/**
 * Echo suppression for one controller: the versions of objects it has already taken into
 * account, so that the wake-up about such a version (most often its own write coming back)
 * is acked without a reconcile. Two ways to know a version:
 * - `wrote`: this replica wrote exactly that version (whatever it was based on);
 * - `reconciled`: a completed reconcile read the object at that version and acted on it, so it
 *   and every older version are covered (resourceVersions grow in commit order).
 * A controller that acts on spec changes only (Kubernetes' GenerationChangedPredicate) also asks
 * `sameGeneration`: a change that left the generation as reconciled needs nothing.
 * Purely an optimisation: a wake-up that reaches another replica, or one this bounded memory
 * has forgotten, runs one reconcile that changes nothing.
 */
export class SeenVersions {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly max = 200_000) {}

  wrote(key: string, rv: string | undefined): void {
    if (!rv) return;
    this.touch(key).wrote = rv;
  }

  reconciled(key: string, rv: string | undefined, generation?: number | string): void {
    const v = asRv(rv);
    if (v === undefined) return;
    const e = this.touch(key);
    if (e.upTo === undefined || e.upTo < v) {
      e.upTo = v;
      e.generation = generation === undefined ? undefined : String(generation);
    }
  }

  /** Whether the newest version reconciled had this generation. */
  sameGeneration(key: string, generation: number | string | undefined): boolean {
    return generation !== undefined && this.entries.get(key)?.generation === String(generation);
  }

  /** Whether a wake-up about version `rv` of the object needs no reconcile. */
  covers(key: string, rv: string | undefined): boolean {
    const e = this.entries.get(key);
    if (!e || !rv) return false;
    if (e.wrote === rv) return true;
    const v = asRv(rv);
    return e.upTo !== undefined && v !== undefined && v <= e.upTo;
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  private touch(key: string): Entry {
    let e = this.entries.get(key);
    if (e) this.entries.delete(key);
    else e = {};
    this.entries.set(key, e);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    return e;
  }
}

/**
 * Echo suppression by content: per key, the signature of what about an object matters to a
 * controller (say a cluster's NoExecute taints), as last handed on. A wake-up whose object has
 * the same signature (a heartbeat that changed nothing of it) need not reach the controller.
 * `record` after the wake-up's own work (reading, fanning out) has succeeded, so a failed one is
 * not taken for done. Bounded (the oldest key is forgotten first); purely an optimisation: after
 * a restart, or once forgotten, the next wake-up is handed on.
 */
export class LastSignatures {
  private readonly last = new Map<string, string>();

  constructor(private readonly max = 10_000) {}

  /** Whether the key's last recorded signature is `sig`. */
  same(key: string, sig: string): boolean {
    return this.last.get(key) === sig;
  }

  record(key: string, sig: string): void {
    this.last.delete(key);
    this.last.set(key, sig);
    if (this.last.size > this.max) this.last.delete(this.last.keys().next().value!);
  }

  forget(key: string): void {
    this.last.delete(key);
  }
}
