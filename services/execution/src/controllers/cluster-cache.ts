import { GK, isClusterReady, memberEndpoint, namesSecret, type Cluster, type EndpointPolicy, type EndpointResult, type KubeObject } from "@flotilla/api";
import type { ObjectStore } from "@flotilla/store";
import type { Logger } from "@flotilla/log";

export interface ClusterEntry {
  cluster: Cluster;
  endpoint: EndpointResult;
  ready: boolean;
  deleting: boolean;
  /** spec.syncMode Pull: an agent in the member applies its Works and reports its status; this service leaves it alone. */
  pull: boolean;
  /** resourceVersion of the Secret the endpoint was built from ("" when none). */
  secretRv: string;
}

/** Whether the cluster is in Pull mode (an agent beside the member does its work). */
export function isPull(c: Cluster | undefined): boolean {
  return c?.spec?.syncMode === "Pull";
}

export type ClusterTransition = "ready" | "not-ready" | "deleting" | "gone";

/**
 * This replica's view of the Clusters and the Secrets they name: read in full every
 * `refreshMs`, and at once for one cluster whenever a wake-up or this service's own write
 * says it changed. Work reconciles read clusters from here instead of from Postgres; deletion
 * decisions re-read the cluster (`fresh`). Transitions (became Ready, started deleting, went
 * away) are reported so the Works of the cluster can be reconciled again.
 */
export class ClusterCache {
  private readonly entries = new Map<string, ClusterEntry>();
  private timer?: NodeJS.Timeout;
  private refreshing?: Promise<void>;

  constructor(
    private readonly store: ObjectStore,
    private readonly o: { refreshMs: number; log: Logger; onTransition?: (cluster: string, t: ClusterTransition) => void; policy?: EndpointPolicy },
  ) {}

  async start(): Promise<void> {
    await this.refreshAll();
    this.timer = setInterval(() => void this.refreshAll().catch((e) => this.o.log.warn({ err: e }, "cluster cache refresh failed")), this.o.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  get(name: string): ClusterEntry | undefined {
    return this.entries.get(name);
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  /** Clusters whose spec.secretRef names this Secret. */
  referencing(namespace: string, name: string): string[] {
    return [...this.entries].filter(([, e]) => namesSecret(e.cluster, namespace, name)).map(([n]) => n);
  }

  /** Re-reads one cluster (and its Secret) from the store now. */
  async fresh(name: string): Promise<ClusterEntry | undefined> {
    const cluster = await this.store.get<Cluster>({ gk: GK.cluster, name });
    if (!cluster) {
      this.remove(name);
      return undefined;
    }
    const secret = await this.secretOf(cluster);
    return this.put(cluster, this.endpoint(cluster, secret), secret?.metadata.resourceVersion ?? "");
  }

  /** Records a Cluster this service just wrote or was told about; the Secret is re-read only when the connection settings changed. */
  note(cluster: Cluster): void {
    const name = cluster.metadata.name ?? "";
    const prev = this.entries.get(name);
    if (!prev || connectionKey(prev.cluster) !== connectionKey(cluster)) {
      void this.fresh(name).catch((e) => this.o.log.warn({ err: e, cluster: name }, "cluster cache refresh failed"));
      return;
    }
    this.put(cluster, prev.endpoint, prev.secretRv);
  }

  /** memberEndpoint under this service's policy, against every Cluster it knows. */
  private endpoint(cluster: Cluster, secret: KubeObject | undefined, all: Iterable<Cluster> = [...this.entries.values()].map((x) => x.cluster)): EndpointResult {
    return memberEndpoint(cluster, secret, all, this.o.policy);
  }

  private async secretOf(cluster: Cluster): Promise<KubeObject | undefined> {
    const ref = cluster.spec?.secretRef;
    if (!ref?.name) return undefined;
    return this.store.get({ gk: GK.secret, namespace: ref.namespace ?? "", name: ref.name });
  }

  private put(cluster: Cluster, endpoint: EndpointResult, secretRv: string): ClusterEntry {
    const name = cluster.metadata.name ?? "";
    const prev = this.entries.get(name);
    // a list that started before a write must not put back the older version
    if (prev && olderThan(cluster, prev.cluster) && prev.secretRv === secretRv) return prev;
    const entry: ClusterEntry = { cluster, endpoint, ready: isClusterReady(cluster), deleting: !!cluster.metadata.deletionTimestamp, pull: isPull(cluster), secretRv };
    this.entries.set(name, entry);
    if (prev) {
      if (entry.ready && !prev.ready) this.o.onTransition?.(name, "ready");
      if (!entry.ready && prev.ready) this.o.onTransition?.(name, "not-ready");
      if (entry.deleting && !prev.deleting) this.o.onTransition?.(name, "deleting");
    }
    return entry;
  }

  private remove(name: string): void {
    if (this.entries.delete(name)) this.o.onTransition?.(name, "gone");
  }

  /** Lists every Cluster and the Secrets they name. */
  refreshAll(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const { items } = await this.store.list<Cluster>(GK.cluster);
        const namespaces = new Set(items.map((c) => c.spec?.secretRef?.namespace).filter((n): n is string => !!n));
        const secrets = new Map<string, KubeObject>();
        for (const ns of namespaces) {
          for (const s of (await this.store.list(GK.secret, { namespace: ns })).items) secrets.set(`${ns}/${s.metadata.name}`, s);
        }
        const seen = new Set<string>();
        for (const c of items) {
          const name = c.metadata.name ?? "";
          seen.add(name);
          const ref = c.spec?.secretRef;
          const secret = ref?.name ? secrets.get(`${ref.namespace ?? ""}/${ref.name}`) : undefined;
          this.put(c, this.endpoint(c, secret, items), secret?.metadata.resourceVersion ?? "");
        }
        for (const name of [...this.entries.keys()]) if (!seen.has(name)) this.remove(name);
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }
}

/** The spec fields that decide how the member is reached. */
function connectionKey(c: Cluster): string {
  const s = c.spec ?? {};
  return JSON.stringify([s.apiEndpoint, s.secretRef?.namespace, s.secretRef?.name, s.insecureSkipTLSVerification, s.proxyURL]);
}

/** Whether `a` is an older version of the same object than `b` (resourceVersions are transaction ids). */
function olderThan(a: Cluster, b: Cluster): boolean {
  const x = a.metadata.resourceVersion ?? "";
  const y = b.metadata.resourceVersion ?? "";
  if (!/^\d+$/.test(x) || !/^\d+$/.test(y) || a.metadata.uid !== b.metadata.uid) return false;
  return BigInt(x) < BigInt(y);
}
