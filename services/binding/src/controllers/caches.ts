import type { AnyPropagationPolicy } from "@flotilla/api";
import type { ObjectStore } from "@flotilla/store";
import { GK } from "../logic/keys.js";

/**
 * The resourceVersions this process wrote, per (consumer scope, object key): the wake-up of a
 * write a controller made itself tells that controller nothing new (the reconcile that wrote
 * it already accounted for it), so it is skipped. Purely an optimisation: a wake-up that
 * arrives at another replica, or after this map forgot the entry, just runs one reconcile
 * that changes nothing. Only the exact resourceVersion written is skipped; any later write
 * by anyone has another one.
 */
export class SelfWrites {
  private readonly entries = new Map<string, string>();
  constructor(private readonly max = 200_000) {}

  note(scopes: readonly string[], key: string, rv: string | undefined): void {
    if (!rv) return;
    for (const s of scopes) {
      const k = `${s}\u0000${key}`;
      this.entries.delete(k);
      this.entries.set(k, rv);
    }
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  /** True (and forgets the entry) when `rv` is the last write this process made to `key` for `scope`. */
  consume(scope: string, key: string, rv: string | undefined): boolean {
    const k = `${scope}\u0000${key}`;
    if (!rv || this.entries.get(k) !== rv) return false;
    this.entries.delete(k);
    return true;
  }
}

/**
 * The newest version of each object a controller's completed reconcile was based on. An
 * object's resourceVersions grow in commit order, so a wake-up for a version at or below it
 * is already covered (a later wake-up brings a newer version). Only for controllers whose
 * decision depends on that object alone plus what their own fan-outs cover (the detector and
 * its template); bounded, and forgetting only costs a redundant reconcile.
 */
export class ReconciledVersions {
  private readonly versions = new Map<string, bigint>();
  constructor(private readonly max = 200_000) {}

  note(key: string, rv: string | undefined): void {
    if (!rv || !/^\d+$/.test(rv)) return;
    const v = BigInt(rv);
    const cur = this.versions.get(key);
    if (cur !== undefined && cur >= v) return;
    this.versions.delete(key);
    this.versions.set(key, v);
    if (this.versions.size > this.max) this.versions.delete(this.versions.keys().next().value!);
  }

  covers(key: string, rv: string | undefined): boolean {
    const cur = this.versions.get(key);
    return cur !== undefined && !!rv && /^\d+$/.test(rv) && BigInt(rv) <= cur;
  }
}

/** Scopes of SelfWrites: who would otherwise be woken up by a write. */
export const Scope = {
  detector: "detector",
  binding: "binding",
  /** Work wake-ups, skipped before the Work is even read to find its binding. */
  work: "work",
} as const;

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
