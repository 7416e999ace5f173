import type { AggregatedStatusItem, AnyResourceBinding, Cluster } from "@flotilla/api";
import { compileRequest, hasReplicas, type AssumedLoad } from "@flotilla/scheduling";
import { usableEstimates, type EstimatorAnswer } from "./estimates.js";

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
  /** The latest reported count (it settles once a capacity report taken after it is held, or `settleMs` after it was seen). */
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

/** A report waiting to settle: `reported` replicas of `key` running on the cluster, seen at `seenAt`. */
interface Report {
  seenAt: number;
  key: string;
  reported: number;
}

/** One cluster's reports waiting to settle, in the order they were seen (so in time order). */
interface ReportQueue {
  items: Report[];
  head: number;
}

const rvOf = (rv: string | undefined): bigint => (rv && /^\d+$/.test(rv) ? BigInt(rv) : 0n);

/**
 * When each cluster's capacity reports were taken, as far as the scheduler knows (ms since the
 * epoch; absent: unknown). A report taken at or after a replica was seen running includes it.
 */
export type ReportTimes = (cluster: string) => number | undefined;

/** How far another process's clock may run ahead of this one's (the capacity reports are stamped by execution or the agent). */
export const REPORT_CLOCK_SKEW_MS = 1000;

const reportTimesCache = new WeakMap<readonly Cluster[], ReadonlyMap<string, number>>();

/**
 * When a Cluster's `resourceSummary` was taken, or undefined when that is not known: the Ready
 * condition's `lastHeartbeatTime` while Ready is True. Execution (and the agent) stamp it just
 * before they list the member's nodes and pods for the summary they write with it, so every pod
 * bound before that time is in the summary (as allocated, or allocating while unbound).
 */
export function summaryTakenAt(cluster: Cluster | undefined): number | undefined {
  if (!cluster?.status?.resourceSummary) return undefined;
  const ready = cluster.status.conditions?.find((c) => c.type === "Ready");
  if (ready?.status !== "True" || !ready.lastHeartbeatTime) return undefined;
  const t = Date.parse(ready.lastHeartbeatTime);
  return Number.isFinite(t) ? t : undefined;
}

/** `summaryTakenAt` of every cluster of a snapshot, by name (cached per snapshot array: it is replaced, never changed). */
export function reportTimesOf(clusters: readonly Cluster[]): ReadonlyMap<string, number> {
  let m = reportTimesCache.get(clusters);
  if (!m) {
    const out = new Map<string, number>();
    for (const c of clusters) {
      const t = summaryTakenAt(c);
      if (t !== undefined) out.set(c.metadata.name ?? "", t);
    }
    reportTimesCache.set(clusters, (m = out));
  }
  return m;
}

/**
 * What one decision on `snapshot` takes from the ledger and the estimator, read together (call
 * it in the same turn of the event loop as the decision): the assumed load, with the reported
 * replicas let go of against the snapshot's own capacity reports, and the estimator's answers
 * that were taken after what the ledger let go of on their cluster (the others count as none).
 */
export function capacityInputs(
  ledger: Pick<AssumedLedger, "load" | "settledThrough"> | undefined,
  snapshot: readonly Cluster[],
  answer: EstimatorAnswer | undefined,
  now: number,
): { assumed?: ReadonlyMap<string, AssumedLoad>; estimates?: ReadonlyMap<string, number> } {
  if (!ledger) return { estimates: answer?.replicas };
  const times = reportTimesOf(snapshot);
  const reportTimes = (c: string) => times.get(c);
  const assumed = ledger.load(now, reportTimes);
  return { assumed, estimates: usableEstimates(answer, (c) => ledger.settledThrough(c, now, reportTimes)) };
}

/**
 * The scheduler's assumed ledger: per cluster, the load of replicas it assigned there that the
 * member's capacity reports do not include yet, so that every decision of a burst sees the ones
 * before it (the estimator's answers and the clusters' resource summaries are seconds old, and
 * would send the whole burst to the same clusters).
 *
 * A binding's replicas on a cluster count as assumed from the moment they are assigned until
 * the member reports them running and a capacity report of that cluster taken after that is in
 * hand (`reportTimes`, given to `load`: the resource summary's time, less `skewMs` for the
 * reporter's clock), or at the latest `settleMs` after the report was seen (for clusters whose
 * reports say nothing of their time). A replica is then never counted in neither, and counted in
 * both (the report and the ledger) only until the next capacity report, not for a fixed period:
 * a cluster whose report has room is not treated as full because of replicas the report already
 * counts. A lower report (pods gone) counts at once; an assignment that grows counts at once;
 * one that shrinks or moves away stops counting at once (the member reports what is still
 * running).
 *
 * The ledger is rebuilt from the bindings alone (`observe` with `initial`: what was reported
 * before the scheduler started counts as settled), so it survives restarts, and every replica
 * of the scheduler keeps one from the same stream of binding changes. Pure: time is passed in.
 */
export class AssumedLedger {
  private readonly entries = new Map<string, Entry>();
  private readonly loads = new Map<string, MutableLoad>();
  /** Per cluster, the reports waiting to settle. */
  private readonly settling = new Map<string, ReportQueue>();
  private freed = 0;
  private readonly skewMs: number;

  constructor(
    private readonly settleMs: number,
    o: { skewMs?: number } = {},
  ) {
    this.skewMs = o.skewMs ?? REPORT_CLOCK_SKEW_MS;
  }

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

  /**
   * The assumed load per cluster as of `now`, against capacity reports taken at `reportTimes`
   * (clusters without any load are absent). Read it at once; it changes with the ledger.
   */
  load(now: number, reportTimes?: ReportTimes): ReadonlyMap<string, AssumedLoad> {
    this.settle(now, reportTimes);
    return this.loads;
  }

  /**
   * Reports seen at or before this time no longer count on the cluster (after `load` with the
   * same arguments): a capacity answer taken before it may miss replicas the ledger let go.
   */
  settledThrough(cluster: string, now: number, reportTimes?: ReportTimes): number {
    const t = reportTimes?.(cluster);
    const byTime = now - this.settleMs;
    return t === undefined ? byTime : Math.max(byTime, t - this.skewMs);
  }

  /** Counts every time some cluster's assumed load went down (a report settled, an assignment shrank, moved or went). */
  get releases(): number {
    return this.freed;
  }

  /** Bindings the ledger knows with load somewhere. */
  get size(): number {
    return this.entries.size;
  }

  private replace(key: string, rv: bigint, view: BindingLoad | undefined, now: number, initial: boolean): void {
    const old = this.entries.get(key);
    const before = old && new Map([...old.placements].map(([c, p]) => [c, p.assigned - p.settled]));
    this.remove(key, false);
    if (!view) {
      // remember the version so an older one arriving late does not bring the load back
      this.entries.set(key, { rv, request: {}, placements: new Map() });
      if (before && [...before.values()].some((n) => n > 0)) this.freed++;
      return;
    }
    const placements = new Map<string, Placement>();
    for (const [cluster, assigned] of view.targets) {
      const reported = view.reported.get(cluster) ?? 0;
      const prev = old?.placements.get(cluster);
      // reports seen before the scheduler started were taken long enough ago
      let settled = initial ? reported : Math.min(prev?.settled ?? 0, reported);
      if (settled > assigned) settled = assigned;
      if (reported > settled && reported !== prev?.reported) this.queue(cluster).items.push({ seenAt: now, key, reported });
      const p = { assigned, settled, reported };
      placements.set(cluster, p);
      this.add(cluster, view.request, p, 1);
    }
    this.entries.set(key, { rv, request: view.request, placements });
    if (before) {
      for (const [c, n] of before) {
        const p = placements.get(c);
        if (n > 0 && (!p || p.assigned - p.settled < n)) {
          this.freed++;
          break;
        }
      }
    }
  }

  private remove(key: string, release = true): void {
    const e = this.entries.get(key);
    if (!e) return;
    let had = false;
    for (const [c, p] of e.placements) {
      if (p.assigned > p.settled) had = true;
      this.add(c, e.request, p, -1);
    }
    this.entries.delete(key);
    if (release && had) this.freed++;
  }

  private queue(cluster: string): ReportQueue {
    let q = this.settling.get(cluster);
    if (!q) this.settling.set(cluster, (q = { items: [], head: 0 }));
    return q;
  }

  private settle(now: number, reportTimes: ReportTimes | undefined): void {
    for (const [cluster, q] of this.settling) {
      const through = this.settledThrough(cluster, now, reportTimes);
      const items = q.items;
      while (q.head < items.length && items[q.head].seenAt <= through) {
        const s = items[q.head++];
        const e = this.entries.get(s.key);
        const p = e?.placements.get(cluster);
        if (!e || !p) continue;
        const settled = Math.min(s.reported, p.reported, p.assigned);
        if (settled <= p.settled) continue;
        this.add(cluster, e.request, p, -1);
        p.settled = settled;
        this.add(cluster, e.request, p, 1);
        this.freed++;
      }
      if (q.head >= items.length) this.settling.delete(cluster);
      else if (q.head > 1024 && q.head * 2 > items.length) {
        items.splice(0, q.head);
        q.head = 0;
      }
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
