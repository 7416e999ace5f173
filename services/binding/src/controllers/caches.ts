import { GK, type AnyPropagationPolicy } from "@flotilla/api";
import type { ObjectStore } from "@flotilla/store";

/**
 * The policies of one namespace (PPs) or of the whole control plane (CPPs) for choosing the
 * policy of an unclaimed template, like upstream's informer cache: dropped on policy wake-ups of
 * that scope and kept at most `ttlMs`. When no cached policy matches, the caller asks again
 * with the template's resourceVersion, and gets a list read after the template was written:
 * a policy missing from that one was created after the template, and its own fan-out reaches
 * the template, so no template is left waiting by a stale list. A result read while an
 * invalidation happened is not kept. The policy finally applied is re-read after the claim.
 */
export class PolicyCache {
  private readonly entries = new Map<string, { at: number; rv: bigint; items: AnyPropagationPolicy[] }>();
  private readonly generations = new Map<string, number>();
  private readonly inflight = new Map<string, Promise<{ rv: bigint; items: AnyPropagationPolicy[] }>>();
  private readonly invalidations = new Map<string, { at: number; rv: bigint }>();
  constructor(
    private readonly store: ObjectStore,
    private readonly ttlMs: number,
  ) {}

  private static key(gk: string, namespace: string): string {
    return gk === GK.propagationPolicy ? `pp|${namespace}` : "cpp";
  }

  /** Drops the scope's list; `rv` is the resourceVersion of the policy write that caused it. */
  invalidate(gk: string, namespace: string, rv?: string): void {
    const k = PolicyCache.key(gk, namespace);
    this.entries.delete(k);
    this.generations.set(k, (this.generations.get(k) ?? 0) + 1);
    if (rv && /^\d+$/.test(rv)) {
      const prev = this.invalidations.get(k);
      const r = BigInt(rv);
      if (!prev || prev.rv <= r) this.invalidations.set(k, { at: performance.now(), rv: r });
    }
  }

  /**
   * Since when (performance.now()) every policy list this replica reads for the scope includes
   * the policy at resourceVersion `policyRv` (or a later version): the time this replica dropped
   * the scope for that write or a later one; undefined when it has not seen such a write.
   */
  visibleSince(gk: string, namespace: string, policyRv: string | undefined): number | undefined {
    const inv = this.invalidations.get(PolicyCache.key(gk, namespace));
    if (!inv || !policyRv || !/^\d+$/.test(policyRv) || inv.rv < BigInt(policyRv)) return undefined;
    return inv.at;
  }

  /** The policies of the scope; with `writtenRv` (a template's resourceVersion), as of a moment after it. */
  async list(gk: string, namespace: string, writtenRv?: string): Promise<AnyPropagationPolicy[]> {
    const k = PolicyCache.key(gk, namespace);
    const hit = this.entries.get(k);
    const need = writtenRv === undefined ? 0n : /^\d+$/.test(writtenRv) ? BigInt(writtenRv) : undefined;
    if (hit && need !== undefined && hit.rv >= need && performance.now() - hit.at < this.ttlMs) return hit.items;
    // join a read already under way when it turns out recent enough
    const pending = this.inflight.get(k);
    if (pending && need !== undefined) {
      const r = await pending;
      if (r.rv >= need) return r.items;
    }
    const gen = this.generations.get(k) ?? 0;
    const at = performance.now();
    const p = this.store.list<AnyPropagationPolicy>(gk, gk === GK.propagationPolicy ? { namespace } : {}).then((r) => ({ rv: BigInt(r.resourceVersion), items: r.items }));
    this.inflight.set(k, p);
    try {
      const r = await p;
      const cur = this.entries.get(k);
      if (this.ttlMs > 0 && (this.generations.get(k) ?? 0) === gen && (!cur || cur.rv <= r.rv)) this.entries.set(k, { at, ...r });
      return r.items;
    } finally {
      if (this.inflight.get(k) === p) this.inflight.delete(k);
    }
  }
}

/** When the detector last started reconciling each template (bounded; forgetting only costs a redundant reconcile). */
export class ReconcileStarts {
  private readonly starts = new Map<string, number>();
  constructor(private readonly max = 200_000) {}

  mark(key: string): void {
    this.starts.delete(key);
    this.starts.set(key, performance.now());
    if (this.starts.size > this.max) this.starts.delete(this.starts.keys().next().value!);
  }

  get(key: string): number | undefined {
    return this.starts.get(key);
  }
}
