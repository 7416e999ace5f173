// Follows resource templates through the pipeline by sampling the writes in the outbox: each
// template's Deployment, its ResourceBinding and the binding's Works, and every Cluster's taints.
// Every `intervalMs` it reads only the rows written since the last sample (rv ≥ the previous
// snapshot's xmin: every transaction below it had finished, so nothing is missed; through the
// outbox's (rv, id) index), and records per stage the sample time at which each template was first
// seen in that stage.
import type { Sql } from "postgres";
import { sleep } from "./stats.js";

export interface Placement {
  name: string;
  replicas: number;
}

export interface BindingState {
  clusters: Placement[];
  /** Scheduled condition True. */
  scheduled: boolean;
}

export interface WorkState {
  /** Applied condition True for the Work's current generation. */
  applied: boolean;
  /** spec.replicas of its (first) manifest, when it has one. */
  replicas: number | undefined;
  deleting: boolean;
}

/** What is known of one template (key "namespace/name"). */
export interface TemplateState {
  /** status.readyReplicas equals spec.replicas on the control plane. */
  ready: boolean;
  binding?: BindingState;
  /** Its binding's Works by cluster. */
  works: Map<string, WorkState>;
}

/** The rates of the first and the last share of a stage's keys (PipelineTracker.flatness). */
export interface Flatness {
  /** Keys in each group. */
  k: number;
  /** Every key reached the stage. */
  complete: boolean;
  first: { n: number; ms: number; perSecond: number };
  last: { n: number; ms: number; perSecond: number };
  /** last.perSecond ÷ first.perSecond: 1 is flat, below 1 the end was slower. */
  ratio: number;
}

export type StagePredicate = (s: TemplateState) => boolean;

const scheduled: StagePredicate = (s) => !!s.binding?.scheduled && s.binding.clusters.length > 0;

/** The stages of a template going through the whole pipeline. */
export const STAGES = {
  bound: (s) => s.binding !== undefined,
  /** spec.clusters non-empty and the Scheduled condition True. */
  scheduled,
  /** Scheduled, and every target cluster has its Work applied at its current generation with that cluster's replicas. */
  worksApplied: (s) => scheduled(s) && worksMatch(s),
  /** The template's status.readyReplicas equals its spec.replicas. */
  ready: (s) => s.ready,
} satisfies Record<string, StagePredicate>;

/** Every cluster in spec.clusters has a Work, not deleting, applied at its current generation, with that cluster's replica count. */
export function worksMatch(s: TemplateState): boolean {
  return (s.binding?.clusters ?? []).every((c) => {
    const w = s.works.get(c.name);
    return !!w && w.applied && !w.deleting && (w.replicas === undefined || w.replicas === c.replicas);
  });
}

interface Stage {
  keys: ReadonlySet<string>;
  holds: StagePredicate;
  at: Map<string, number>;
}

interface Row {
  gk: string;
  namespace: string;
  name: string;
  deleting: boolean;
  f: Record<string, unknown> | null;
}

const DEPLOYMENT = "apps/Deployment";
const RB = "work.karmada.io/ResourceBinding";
const WORK = "work.karmada.io/Work";
const CLUSTER = "cluster.karmada.io/Cluster";
const ORDER: Record<string, number> = { [CLUSTER]: 0, [DEPLOYMENT]: 1, [RB]: 2, [WORK]: 3 };
const EXECUTION_SPACE = "karmada-es-";

export class PipelineTracker {
  readonly templates = new Map<string, TemplateState>();
  /** First time each taint ("key:effect") was seen on each cluster, for the taints it has now. */
  readonly taints = new Map<string, Map<string, number>>();
  /** Samples taken and the time they took (ms). */
  readonly samples = { count: 0, totalMs: 0, maxMs: 0, errors: 0 };
  /** The start time of every sample that succeeded, ascending (performance.now() ms). */
  readonly sampleTimes: number[] = [];
  private readonly stages = new Map<string, Stage>();
  private readonly templateOf = new Map<string, string>();
  private watermark = 0;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly sql: Sql,
    private readonly intervalMs = 250,
  ) {}

  /** Starts recording, for `keys`, the first sample time at which `holds` is true. */
  track(name: string, keys: Iterable<string>, holds: StagePredicate): ReadonlyMap<string, number> {
    const stage: Stage = { keys: new Set(keys), holds, at: new Map() };
    this.stages.set(name, stage);
    const now = performance.now();
    for (const k of stage.keys) if (this.holdsFor(stage, k)) stage.at.set(k, now);
    return stage.at;
  }

  /** Keys that reached the stage, with the sample time (performance.now() ms). */
  reached(name: string): ReadonlyMap<string, number> {
    return this.stages.get(name)?.at ?? new Map();
  }

  /** How many of its keys reached each stage. */
  counts(names: readonly string[]): number[] {
    return names.map((n) => this.stages.get(n)?.at.size ?? 0);
  }

  start(): void {
    this.running ??= (async () => {
      while (!this.stopped) {
        const t = performance.now();
        try {
          await this.sample(t);
        } catch (e) {
          if (this.stopped) break;
          this.samples.errors++;
          if (this.samples.errors <= 3) console.error(`pipeline sample failed: ${(e as Error).message}`);
        }
        const took = performance.now() - t;
        this.samples.count++;
        this.samples.totalMs += took;
        this.samples.maxMs = Math.max(this.samples.maxMs, took);
        await sleep(Math.max(0, this.intervalMs - took));
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  /** One sample now (also what the loop runs). */
  async sample(t = performance.now()): Promise<void> {
    // taken before the rows: a lower bound of the rows' snapshot, so the next sample misses nothing
    const [{ xmin }] = await this.sql<{ xmin: string }[]>`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`;
    // from the outbox (every write's object, indexed by resourceVersion), not from `objects`,
    // which has no index on it: a scan of every object four times a second would cost Postgres
    // more the larger the store, and the runner would measure itself
    const rows = await this.sql<Row[]>`
      SELECT gk, namespace, name, type = 'DELETED' OR object->'metadata' ? 'deletionTimestamp' AS deleting, CASE gk
        WHEN ${DEPLOYMENT} THEN jsonb_build_object('ready', coalesce((object->'status'->>'readyReplicas')::int, 0) = coalesce((object->'spec'->>'replicas')::int, 1))
        WHEN ${RB} THEN jsonb_build_object(
          'resource', object->'spec'->'resource',
          'clusters', object->'spec'->'clusters',
          'scheduled', coalesce(object->'status'->'conditions' @> '[{"type":"Scheduled","status":"True"}]', false))
        WHEN ${WORK} THEN jsonb_build_object(
          'rbNamespace', object->'metadata'->'annotations'->>'resourcebinding.karmada.io/namespace',
          'rbName', object->'metadata'->'annotations'->>'resourcebinding.karmada.io/name',
          'replicas', object->'spec'->'workload'->'manifests'->0->'spec'->'replicas',
          'applied', EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(object->'status'->'conditions', '[]')) c
                             WHERE c->>'type' = 'Applied' AND c->>'status' = 'True' AND (c->>'observedGeneration')::bigint = (object->'metadata'->>'generation')::bigint))
        WHEN ${CLUSTER} THEN jsonb_build_object('taints', object->'spec'->'taints')
      END AS f
      FROM outbox WHERE rv >= ${this.watermark}::bigint AND gk IN (${DEPLOYMENT}, ${RB}, ${WORK}, ${CLUSTER})
      ORDER BY rv, id`;
    this.watermark = Number(xmin);
    // bindings before their Works; each object's versions in the order written (the last one wins)
    rows.sort((a, b) => ORDER[a.gk]! - ORDER[b.gk]!);
    const touched = new Set<string>();
    for (const r of rows) {
      const key = this.apply(r, t);
      if (key) touched.add(key);
    }
    for (const stage of this.stages.values()) for (const k of touched) if (stage.keys.has(k) && !stage.at.has(k) && this.holdsFor(stage, k)) stage.at.set(k, t);
    this.sampleTimes.push(t);
  }

  /** The last successful sample before `t`: a key first seen at `t` reached its stage after it. `t - intervalMs` when there is none. */
  previousSample(t: number): number {
    const a = this.sampleTimes;
    let [lo, hi] = [0, a.length]; // first index with a[i] >= t
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (a[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? a[lo - 1]! : t - this.intervalMs;
  }

  /**
   * Flatness of a stage: the rate at which the first and the last `share` of `of` keys reached it
   * (by the time each was first seen in it). k = ceil(share · of) keys each; a group's time runs
   * from the sample before the first of its keys was seen (when it may have got there) to the
   * sample that saw the last of them, so both rates are rounded down alike by the sampling. When
   * fewer than `of` keys reached the stage, "last" is the last k of those that did, and `complete`
   * is false.
   */
  flatness(name: string, of: number, share = 0.1): Flatness | undefined {
    const times = [...this.reached(name).values()].sort((a, b) => a - b);
    const k = Math.max(1, Math.ceil(share * of));
    if (times.length < k) return undefined;
    const group = (from: number, to: number) => {
      const ms = times[to]! - this.previousSample(times[from]!);
      return { n: to - from + 1, ms, perSecond: ((to - from + 1) / ms) * 1000 };
    };
    const first = group(0, k - 1);
    const last = group(times.length - k, times.length - 1);
    return { k, complete: times.length >= of, first, last, ratio: last.perSecond / first.perSecond };
  }

  private holdsFor(stage: Stage, key: string): boolean {
    const s = this.templates.get(key);
    return !!s && stage.holds(s);
  }

  private template(key: string): TemplateState {
    let s = this.templates.get(key);
    if (!s) this.templates.set(key, (s = { ready: false, works: new Map() }));
    return s;
  }

  /** Folds one row into the state; returns the template it concerns. */
  private apply(r: Row, t: number): string | undefined {
    const f = r.f ?? {};
    switch (r.gk) {
      case CLUSTER: {
        const now = new Set(((f.taints ?? []) as { key: string; effect: string }[]).map((x) => `${x.key}:${x.effect}`));
        const seen = this.taints.get(r.name) ?? new Map<string, number>();
        for (const k of seen.keys()) if (!now.has(k)) seen.delete(k);
        for (const k of now) if (!seen.has(k)) seen.set(k, t);
        this.taints.set(r.name, seen);
        return undefined;
      }
      case DEPLOYMENT: {
        const key = `${r.namespace}/${r.name}`;
        this.template(key).ready = f.ready === true;
        return key;
      }
      case RB: {
        const res = (f.resource ?? {}) as { namespace?: string; name?: string };
        const key = `${res.namespace ?? r.namespace}/${res.name}`;
        this.templateOf.set(`${r.namespace}/${r.name}`, key);
        const clusters = ((f.clusters ?? []) as { name: string; replicas?: number }[]).map((c) => ({ name: c.name, replicas: c.replicas ?? 0 }));
        this.template(key).binding = { clusters, scheduled: f.scheduled === true };
        return key;
      }
      case WORK: {
        const key = this.templateOf.get(`${f.rbNamespace}/${f.rbName}`);
        if (!key || !r.namespace.startsWith(EXECUTION_SPACE)) return undefined;
        const replicas = typeof f.replicas === "number" ? f.replicas : undefined;
        this.template(key).works.set(r.namespace.slice(EXECUTION_SPACE.length), { applied: f.applied === true, replicas, deleting: r.deleting });
        return key;
      }
    }
    return undefined;
  }
}
