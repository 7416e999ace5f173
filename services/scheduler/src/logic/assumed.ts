import type { AggregatedStatusItem, AnyResourceBinding } from "@flotilla/api";
import { compileRequest, hasReplicas, type AssumedLoad } from "@flotilla/scheduling";

/** What the assumed ledger needs of one binding. */
export interface BindingLoad {
  /** Replicas assigned per cluster (`spec.clusters`, entries with replicas > 0). */
  readonly targets: ReadonlyMap<string, number>;
  /** One replica's request, in the estimator's unit (millicores for cpu, whole units otherwise). */
  readonly request: Readonly<Record<string, number>>;
  /** Replicas the member reports running per cluster (from `status.aggregatedStatus`). */
  readonly reported: ReadonlyMap<string, number>;
}

type Obj = Record<string, unknown>;
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** Workloads whose members report ready replicas (Kubernetes leaves a zero count out). */
const READY_COUNTED = new Set(["Deployment", "StatefulSet", "ReplicaSet"]);

/**
 * The replicas a member reports as running for one aggregated-status item, or undefined when it
 * reports nothing yet. Deployments and their kin count `readyReplicas` (a ready pod is bound
 * to a node, so the member's capacity reports include it); Jobs count active and succeeded pods;
 * any other kind is taken as fully reported once applied (nothing tells more).
 */
export function reportedReplicas(kind: string, item: AggregatedStatusItem, assigned: number): number | undefined {
  if (!item.applied) return undefined;
  const s = (item.status ?? {}) as Obj;
  if (READY_COUNTED.has(kind)) return num(s.readyReplicas) ?? 0;
  if (kind === "Job") return (num(s.active) ?? 0) + (num(s.succeeded) ?? 0);
  return num(s.readyReplicas) ?? assigned;
}

/** The ledger's view of a binding; undefined when it takes no capacity (deleting, no replicas, nowhere placed). */
export function bindingLoad(b: AnyResourceBinding): BindingLoad | undefined {
  const spec = b.spec;
  if (!spec || b.metadata.deletionTimestamp || !hasReplicas(spec)) return undefined;
  const targets = new Map<string, number>();
  for (const t of spec.clusters ?? []) if (t.name && (t.replicas ?? 0) > 0) targets.set(t.name, t.replicas!);
  if (targets.size === 0) return undefined;
  const request: Record<string, number> = {};
  for (const r of compileRequest(spec.replicaRequirements?.resourceRequest)) request[r.key] = r.amount;
  const reported = new Map<string, number>();
  const kind = spec.resource?.kind ?? "";
  for (const item of b.status?.aggregatedStatus ?? []) {
    const c = item.clusterName ?? "";
    const assigned = targets.get(c);
    if (assigned === undefined) continue;
    const r = reportedReplicas(kind, item, assigned);
    if (r !== undefined && r > 0) reported.set(c, r);
  }
  return { targets, request, reported };
}

interface Placement {
  assigned: number;
  /** Reported replicas the ledger no longer counts as assumed. */
  settled: number;
  /** The latest reported count (it settles `settleMs` after it was seen). */
  reported: number;
}

interface Entry {
  rv: bigint;
  request: Readonly<Record<string, number>>;
  placements: Map<string, Placement>;
}

interface MutableLoad {
  pods: number;
  resources: Record<string, number>;
}

const rvOf = (rv: string | undefined): bigint => (rv && /^\d+$/.test(rv) ? BigInt(rv) : 0n);

/**
 * The scheduler's assumed ledger: per cluster, the load of replicas it assigned there that the
 * member's capacity reports do not include yet, so that every decision of a burst sees the ones
 * before it (the estimator's answers and the clusters' resource summaries are seconds old, and
 * would send the whole burst to the same clusters).
 *
 * A binding's replicas on a cluster count as assumed from the moment they are assigned until
 * the member reports them running, and for `settleMs` after that: long enough for every
 * capacity report in use (the clusters' resource summaries, the estimator's node snapshots) to
 * have been taken after they were running, so a replica is never counted in neither. A lower
 * report (pods gone) counts at once; an assignment that grows counts at once; one that shrinks
 * or moves away stops counting at once (the member reports what is still running). The effect
 * errs on the side of counting a replica twice for a few seconds, never not at all.
 *
 * The ledger is rebuilt from the bindings alone (`observe` with `initial`: what was reported
 * before the scheduler started counts as settled), so it survives restarts, and every replica
 * of the scheduler keeps one from the same stream of binding changes. Pure: time is passed in.
 */
export class AssumedLedger {
  private readonly entries = new Map<string, Entry>();
  private readonly loads = new Map<string, MutableLoad>();
  /** Reports waiting to settle, in the order they were seen (so in time order). */
  private readonly settling: { at: number; key: string; cluster: string; reported: number }[] = [];
  private head = 0;

  constructor(private readonly settleMs: number) {}

  /**
   * A version of a binding as stored (from a list, the watch, or a read). Ignored when the
   * ledger already reflects this version or a newer one (or a decision made on top of it).
   */
  observe(key: string, rv: string | undefined, view: BindingLoad | undefined, now: number, o: { initial?: boolean } = {}): void {
    const v = rvOf(rv);
    const cur = this.entries.get(key);
    if (cur && v <= cur.rv) return;
    this.replace(key, v, view, now, o.initial ?? false);
  }

  /**
   * The scheduler's own decision on the version `readRv` it read, counted at once (before it is
   * written, so no decision made meanwhile misses it). Returns an undo for when the write fails.
   */
  assume(key: string, readRv: string | undefined, view: BindingLoad | undefined, now: number): () => void {
    const before = this.entries.get(key);
    const saved = before && { rv: before.rv, request: before.request, placements: new Map([...before.placements].map(([c, p]) => [c, { ...p }])) };
    this.replace(key, rvOf(readRv), view, now, false);
    const mine = this.entries.get(key);
    return () => {
      // a newer version seen meanwhile stands
      if (this.entries.get(key) !== mine) return;
      this.remove(key);
      if (saved) {
        this.entries.set(key, saved);
        for (const [c, p] of saved.placements) this.add(c, saved.request, p, 1);
      }
    };
  }

  /** The binding is gone. */
  forget(key: string): void {
    this.remove(key);
  }

  /** The assumed load per cluster as of `now` (clusters without any are absent). Read it at once; it changes with the ledger. */
  load(now: number): ReadonlyMap<string, AssumedLoad> {
    this.settle(now);
    return this.loads;
  }

  /** Bindings the ledger knows with load somewhere. */
  get size(): number {
    return this.entries.size;
  }

  private replace(key: string, rv: bigint, view: BindingLoad | undefined, now: number, initial: boolean): void {
    const old = this.entries.get(key);
    this.remove(key);
    if (!view) {
      // remember the version so an older one arriving late does not bring the load back
      this.entries.set(key, { rv, request: {}, placements: new Map() });
      return;
    }
    const placements = new Map<string, Placement>();
    for (const [cluster, assigned] of view.targets) {
      const reported = view.reported.get(cluster) ?? 0;
      const prev = old?.placements.get(cluster);
      // reports seen before the scheduler started were taken long enough ago
      let settled = initial ? reported : Math.min(prev?.settled ?? 0, reported);
      if (settled > assigned) settled = assigned;
      if (reported > settled && reported !== prev?.reported) this.settling.push({ at: now + this.settleMs, key, cluster, reported });
      const p = { assigned, settled, reported };
      placements.set(cluster, p);
      this.add(cluster, view.request, p, 1);
    }
    this.entries.set(key, { rv, request: view.request, placements });
  }

  private remove(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    for (const [c, p] of e.placements) this.add(c, e.request, p, -1);
    this.entries.delete(key);
  }

  private settle(now: number): void {
    const q = this.settling;
    while (this.head < q.length && q[this.head].at <= now) {
      const s = q[this.head++];
      const e = this.entries.get(s.key);
      const p = e?.placements.get(s.cluster);
      if (!e || !p) continue;
      const settled = Math.min(s.reported, p.reported, p.assigned);
      if (settled <= p.settled) continue;
      this.add(s.cluster, e.request, p, -1);
      p.settled = settled;
      this.add(s.cluster, e.request, p, 1);
    }
    if (this.head > 1024 && this.head * 2 > q.length) {
      q.splice(0, this.head);
      this.head = 0;
    }
  }

  private add(cluster: string, request: Readonly<Record<string, number>>, p: Placement, sign: 1 | -1): void {
    const n = p.assigned - p.settled;
    if (n <= 0) return;
    let l = this.loads.get(cluster);
    if (!l) this.loads.set(cluster, (l = { pods: 0, resources: {} }));
    l.pods += sign * n;
    for (const k in request) l.resources[k] = (l.resources[k] ?? 0) + sign * n * request[k];
    if (l.pods <= 0) this.loads.delete(cluster);
  }
}
