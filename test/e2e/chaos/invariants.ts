// What must hold once a failover walk-through has settled, whatever was killed or restarted on
// the way: read from the database (bindings, Works, Clusters), the simulated members (their
// Deployments) and the ledger of the service processes. `violations()` lists every statement
// that does not hold (empty: all hold); `settled()` waits until the list is empty.
import type { Sql } from "postgres";
import { ResourceBindingNameAnnotationKey, ResourceBindingNamespaceAnnotationKey } from "@flotilla/api";
import type { Simulator } from "@flotilla/member-sim";
import { sleep } from "@flotilla/testkit";
import type { Managed, ServiceName } from "../../load/lib/stack.js";

export interface Expected {
  namespace: string;
  name: string;
  replicas: number;
}

/** Every service process the test started, and which of them it killed or stopped on purpose. */
export class ProcessLedger {
  private readonly all: { name: ServiceName; proc: Managed }[] = [];
  private readonly meant = new Set<Managed>();

  track(name: ServiceName, proc: Managed): Managed {
    this.all.push({ name, proc });
    return proc;
  }

  /** Kills (SIGKILL by default) a process as an exit the test asked for. */
  async kill(proc: Managed, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    this.meant.add(proc);
    await proc.kill(signal);
  }

  /** Processes that exited without the test killing them. */
  unexpected(): string[] {
    return this.all.filter(({ proc }) => proc.exit && !this.meant.has(proc)).map(({ name, proc }) => `${name} (pid ${proc.child.pid}) exited on its own (${proc.exit!.signal ?? proc.exit!.code})`);
  }

  /** How many processes of each service were killed. */
  kills(): Partial<Record<ServiceName, number>> {
    const n: Partial<Record<ServiceName, number>> = {};
    for (const { name, proc } of this.all) if (this.meant.has(proc)) n[name] = (n[name] ?? 0) + 1;
    return n;
  }
}

export interface World {
  sql: Sql;
  sim: Simulator;
  /** The members of the placement. */
  members: readonly string[];
  /** The member that failed and came back. */
  failed: string;
  deployments: readonly Expected[];
  ledger: ProcessLedger;
  /** The services that must be running now. */
  running: () => Iterable<[ServiceName, Managed]>;
}

type Body = {
  metadata: { name: string; namespace?: string; generation?: number; deletionTimestamp?: string; annotations?: Record<string, string> };
  // the checks read deep into specs and statuses of several kinds
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec?: Record<string, any>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  status?: Record<string, any>;
};

const condition = (b: Body | undefined, type: string) => ((b?.status?.conditions ?? []) as { type: string; status: string }[]).find((c) => c.type === type)?.status;

/** Every invariant that does not hold right now (empty when all hold). */
export async function violations(w: World): Promise<string[]> {
  const out: string[] = [];
  const rows = await w.sql<{ gk: string; body: Body }[]>`
    SELECT gk, body FROM objects
    WHERE gk IN ('work.karmada.io/ResourceBinding', 'work.karmada.io/Work', 'cluster.karmada.io/Cluster')`;
  const of = (gk: string) => rows.filter((r) => r.gk === gk).map((r) => r.body);
  const bindings = new Map(of("work.karmada.io/ResourceBinding").map((b) => [`${b.metadata.namespace}/${b.metadata.name}`, b]));
  const works = of("work.karmada.io/Work");
  const clusters = new Map(of("cluster.karmada.io/Cluster").map((c) => [c.metadata.name, c]));

  // the failed member is back: Ready and untainted
  const failed = clusters.get(w.failed);
  if (condition(failed, "Ready") !== "True") out.push(`${w.failed} is not Ready (${condition(failed, "Ready")})`);
  if ((failed?.spec?.taints ?? []).length > 0) out.push(`${w.failed} still has taints ${JSON.stringify(failed?.spec?.taints)}`);

  // every binding off the failed member, scheduled, with no eviction task left
  /** cluster → "ns/name" → replicas: what the members must run. */
  const placement = new Map<string, Map<string, number>>(w.members.map((m) => [m, new Map()]));
  for (const d of w.deployments) {
    const key = `${d.namespace}/${d.name}-deployment`;
    const b = bindings.get(key);
    if (!b || b.metadata.deletionTimestamp) {
      out.push(`binding ${key} missing`);
      continue;
    }
    const targets = (b.spec?.clusters ?? []) as { name: string; replicas?: number }[];
    const sum = targets.reduce((n, t) => n + (t.replicas ?? 0), 0);
    if (targets.length === 0) out.push(`binding ${key} is not scheduled`);
    else if (sum !== d.replicas) out.push(`binding ${key} places ${sum} replicas, not ${d.replicas}`);
    if (targets.some((t) => t.name === w.failed)) out.push(`binding ${key} is still on ${w.failed}`);
    if ((b.status?.schedulerObservedGeneration ?? -1) < (b.metadata.generation ?? 0)) out.push(`binding ${key}: the scheduler has not observed generation ${b.metadata.generation}`);
    const tasks = (b.spec?.gracefulEvictionTasks ?? []) as { fromCluster: string }[];
    if (tasks.length > 0) out.push(`binding ${key} still has eviction tasks from ${tasks.map((t) => t.fromCluster).join(", ")}`);
    for (const t of targets) {
      if (!placement.has(t.name)) out.push(`binding ${key} is on ${t.name}, outside the placement`);
      else placement.get(t.name)!.set(`${d.namespace}/${d.name}`, t.replicas ?? 0);
    }
  }

  // one Work per target cluster, and no other Work (none left deleting: stale Works are gone)
  const seen = new Map<string, number>();
  for (const work of works) {
    const cluster = work.metadata.namespace?.replace(/^karmada-es-/, "") ?? "";
    const a = work.metadata.annotations ?? {};
    const binding = `${a[ResourceBindingNamespaceAnnotationKey]}/${a[ResourceBindingNameAnnotationKey]}`;
    const id = `${work.metadata.namespace}/${work.metadata.name}`;
    const manifest = (work.spec?.workload?.manifests ?? [])[0] as Body | undefined;
    const target = manifest && `${manifest.metadata.namespace}/${manifest.metadata.name}`;
    if (work.metadata.deletionTimestamp) out.push(`Work ${id} is still deleting`);
    else if (!target || !placement.get(cluster)?.has(target) || `${manifest.metadata.namespace}/${manifest.metadata.name}-deployment` !== binding) out.push(`Work ${id} (binding ${binding}) is an orphan`);
    else seen.set(`${cluster}|${target}`, (seen.get(`${cluster}|${target}`) ?? 0) + 1);
    // a Work that says Applied is present on its member
    if (condition(work, "Applied") === "True" && manifest && w.members.includes(cluster)) {
      if (!w.sim.cluster(cluster).get("apps/v1", "Deployment", manifest.metadata.name, manifest.metadata.namespace)) out.push(`Work ${id} says Applied but ${cluster} has no Deployment ${target}`);
    }
  }
  for (const [cluster, want] of placement) {
    for (const target of want.keys()) {
      const n = seen.get(`${cluster}|${target}`) ?? 0;
      if (n !== 1) out.push(`${n} Works for ${target} on ${cluster}, not 1`);
    }
  }

  // member Deployments match the placement, and run what they were given
  const namespaces = new Set(w.deployments.map((d) => d.namespace));
  for (const m of w.members) {
    const want = placement.get(m)!;
    const have = new Map<string, Body>();
    for (const ns of namespaces) for (const d of w.sim.cluster(m).list("apps/v1", "Deployment", ns) as Body[]) have.set(`${ns}/${d.metadata.name}`, d);
    for (const [target, replicas] of want) {
      const d = have.get(target);
      if (!d) out.push(`${m} has no Deployment ${target} (placed ${replicas})`);
      else if (d.spec?.replicas !== replicas) out.push(`${m} runs ${target} with ${d.spec?.replicas} replicas, placed ${replicas}`);
      else if ((d.status?.readyReplicas ?? 0) !== replicas) out.push(`${m}: ${target} has ${d.status?.readyReplicas ?? 0}/${replicas} ready`);
    }
    for (const target of have.keys()) if (!want.has(target)) out.push(`${m} still runs Deployment ${target}, placed elsewhere`);
  }

  // no service exited unless the test killed it, and every service runs now
  out.push(...w.ledger.unexpected());
  for (const [name, p] of w.running()) if (p.exit) out.push(`${name} is not running`);
  return out;
}

/** Waits until every invariant holds; fails with the ones that still do not after `timeoutMs`. */
export async function settled(w: World, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  let last: string[] = [];
  for (;;) {
    try {
      last = await violations(w);
    } catch (e) {
      last = [`could not check: ${(e as Error).message}`];
    }
    if (last.length === 0) return Date.now() - t0;
    // a service that exited on its own will not come back: no point in waiting
    if (Date.now() - t0 > timeoutMs || w.ledger.unexpected().length > 0) {
      const shown = last.slice(0, 25).join("\n  ");
      throw new Error(`invariants do not hold after ${Date.now() - t0} ms (${last.length}):\n  ${shown}${last.length > 25 ? "\n  …" : ""}`);
    }
    await sleep(250);
  }
}

/** The bindings as they are (placement, tasks, scheduling state) and the Works per cluster: for a failure report. */
export async function snapshot(w: World): Promise<string> {
  const rows = await w.sql<{ name: string; clusters: unknown; tasks: unknown; generation: number; observed: number; placement: string | null }[]>`
    SELECT body->'metadata'->>'name' AS name, body->'spec'->'clusters' AS clusters, body->'spec'->'gracefulEvictionTasks' AS tasks,
           (body->'metadata'->>'generation')::int AS generation, (body->'status'->>'schedulerObservedGeneration')::int AS observed,
           body->'metadata'->'annotations'->>'policy.karmada.io/applied-placement' AS placement
    FROM objects WHERE gk = 'work.karmada.io/ResourceBinding' ORDER BY 1`;
  const works = await w.sql<{ ns: string; n: number; deleting: number }[]>`
    SELECT body->'metadata'->>'namespace' AS ns, count(*)::int AS n, count(*) FILTER (WHERE body->'metadata' ? 'deletionTimestamp')::int AS deleting
    FROM objects WHERE gk = 'work.karmada.io/Work' GROUP BY 1 ORDER BY 1`;
  return [...rows.map((r) => JSON.stringify(r)), ...works.map((r) => `Works in ${r.ns}: ${r.n} (${r.deleting} deleting)`)].join("\n");
}
