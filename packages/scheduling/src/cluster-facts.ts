import type { Cluster } from "@flotilla/api";
import { ceilDiv, quantityMilliValue, quantityValue, subtractQuantity, tryParseQuantity, type Quantity } from "@flotilla/api";

/**
 * Values derived from a Cluster object that every scheduling cycle needs: parsed resource
 * summary, API enablement lookup. They are computed once per object and cached by identity,
 * so Cluster objects handed to the scheduler must be treated as immutable snapshots (replace
 * an object to change it, as with any informer cache). `forgetCluster` drops a cached entry.
 */
export class ClusterFacts {
  readonly cluster: Cluster;
  readonly name: string;
  /** Enabled kinds per `groupVersion`. */
  readonly apis: ReadonlyMap<string, ReadonlySet<string>>;
  /** `CompleteAPIEnablements=True`. */
  readonly completeAPIs: boolean;
  /** `allocatable − allocated − allocating` pods, floored at 0 (0 without a summary). */
  readonly allowedPods: number;
  private readonly freeByKey = new Map<string, number>();
  private lastApiVersion: string | undefined;
  private lastKind: string | undefined;
  private lastEnabled = false;

  constructor(cluster: Cluster) {
    this.cluster = cluster;
    this.name = cluster.metadata.name ?? "";
    const apis = new Map<string, Set<string>>();
    for (const e of cluster.status?.apiEnablements ?? []) {
      const gv = e.groupVersion ?? "";
      let kinds = apis.get(gv);
      if (!kinds) apis.set(gv, (kinds = new Set()));
      for (const r of e.resources ?? []) kinds.add(r.kind ?? "");
    }
    this.apis = apis;
    this.completeAPIs = cluster.status?.conditions?.some((c) => c.type === "CompleteAPIEnablements" && c.status === "True") ?? false;
    const s = cluster.status?.resourceSummary;
    let pods = 0;
    if (s) {
      const n = valueOf(s.allocatable, "pods") - valueOf(s.allocated, "pods") - valueOf(s.allocating, "pods");
      pods = n > 0 ? n : 0;
    }
    this.allowedPods = pods;
  }

  /** Whether `status.apiEnablements` lists the kind (the last question is remembered). */
  apiListed(apiVersion: string, kind: string): boolean {
    if (apiVersion !== this.lastApiVersion || kind !== this.lastKind) {
      this.lastEnabled = this.apis.get(apiVersion)?.has(kind) ?? false;
      this.lastApiVersion = apiVersion;
      this.lastKind = kind;
    }
    return this.lastEnabled;
  }

  /**
   * The free amount of a resource (`allocatable − allocated − allocating`, rounded up, in the
   * compared unit); 0 when nothing is left; -1 when the resource is not allocatable at all.
   */
  free(key: string): number {
    let v = this.freeByKey.get(key);
    if (v === undefined) {
      v = computeFree(this.cluster, key);
      this.freeByKey.set(key, v);
    }
    return v;
  }
}

const cache = new WeakMap<Cluster, ClusterFacts>();

type ResourceList = { readonly [name: string]: string } | undefined;

function valueOf(list: ResourceList, key: string): number {
  const q = tryParseQuantity(list?.[key]);
  return q ? quantityValue(q) : 0;
}

/** The cached facts of a cluster object. */
export function clusterFacts(cluster: Cluster): ClusterFacts {
  let f = cache.get(cluster);
  if (!f) cache.set(cluster, (f = new ClusterFacts(cluster)));
  return f;
}

const listCache = new WeakMap<readonly Cluster[], ClusterFacts[]>();

/**
 * The facts of every cluster in a snapshot array, parallel to it. The array is cached by
 * identity too, and each entry re-checked against the array, so a mutated array is safe.
 */
export function snapshotFacts(clusters: readonly Cluster[]): ClusterFacts[] {
  let list = listCache.get(clusters);
  if (list && list.length === clusters.length) {
    let same = true;
    for (let i = 0; i < clusters.length; i++) {
      if (list[i].cluster !== clusters[i]) {
        same = false;
        break;
      }
    }
    if (same) return list;
  }
  list = clusters.map(clusterFacts);
  listCache.set(clusters, list);
  return list;
}

/** Drops the cached facts of a cluster object that was changed in place. */
export function forgetCluster(cluster: Cluster): void {
  cache.delete(cluster);
}

/** The amount of a resource in the unit the estimator compares: millicores for cpu, whole units otherwise. */
export function resourceAmount(key: string, q: Quantity): number {
  return key === "cpu" ? quantityMilliValue(q) : quantityValue(q);
}

function computeFree(cluster: Cluster, key: string): number {
  const s = cluster.status?.resourceSummary;
  const alloc = tryParseQuantity(s?.allocatable?.[key]);
  if (!alloc) return -1;
  const allocated = tryParseQuantity(s?.allocated?.[key]);
  const allocating = tryParseQuantity(s?.allocating?.[key]);
  const a = alloc.exactMilli;
  const b = allocated === undefined ? 0 : allocated.exactMilli;
  const c = allocating === undefined ? 0 : allocating.exactMilli;
  if (a !== undefined && b !== undefined && c !== undefined) {
    const m = a - b - c;
    if (Number.isSafeInteger(m)) {
      if (m <= 0) return 0;
      return key === "cpu" ? m : ceilDiv(m, 1000);
    }
  }
  let avail = alloc;
  if (allocated) avail = subtractQuantity(avail, allocated);
  if (allocating) avail = subtractQuantity(avail, allocating);
  if (quantityValue(avail) <= 0) return 0;
  return resourceAmount(key, avail);
}
