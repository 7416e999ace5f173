import { GK, compareResourceVersions, isClusterReady, memberEndpoint, namesSecret, type Cluster, type EndpointPolicy, type EndpointResult, type KubeObject } from "@flotilla/api";
import { Informer } from "@flotilla/runtime";
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
 * This replica's view of the Clusters and the Secrets they name. The Clusters are kept by an
 * informer (listed at start, then current from the watch, listed again after a watch error);
 * each one's entry (its endpoint and credentials, from the Secret it names) is derived as the
 * informer delivers it. A wake-up re-reads one cluster at once (`fresh`) and this service's own
 * writes are taken at once (`note`): neither waits for the watch. The Secrets are not followed (the
 * store holds users' Secrets too): only the ones the Clusters name are kept, read when a Cluster
 * first names one, on the Secret's wake-up (`fresh` of the clusters `referencing` it), and all
 * of them again every `refreshMs` (a replica that did not take a Secret's wake-up learns of its
 * change then). Work reconciles read clusters from here instead of from Postgres; deletion
 * decisions re-read the cluster (`fresh`). Transitions (became Ready, started deleting, went
 * away) are reported so the Works of the cluster can be reconciled again.
 */
export class ClusterCache {
  private readonly informer: Informer<Cluster>;
  private readonly entries = new Map<string, ClusterEntry>();
  /** The Secrets the Clusters name, as last read, by "namespace/name" (undefined: there was none). */
  private readonly secrets = new Map<string, KubeObject | undefined>();
  /** Reads of a Secret a Cluster newly names, in flight. */
  private readonly loading = new Map<string, Promise<void>>();
  private timer?: NodeJS.Timeout;
  private refreshing?: Promise<void>;

  constructor(
    private readonly store: ObjectStore,
    private readonly o: { refreshMs: number; log: Logger; onTransition?: (cluster: string, t: ClusterTransition) => void; policy?: EndpointPolicy },
  ) {
    this.informer = new Informer<Cluster>({
      store,
      gk: GK.cluster,
      log: o.log,
      onEvent: (e) => {
        // the first list's entries are made at once, with its Secrets (start)
        if (e.initial) return;
        const prev = this.entries.get(e.key)?.cluster;
        this.update([e.key, ...this.sharing(prev), ...this.sharing(e.value)]);
      },
    });
  }

  async start(): Promise<void> {
    await this.informer.start();
    await this.refreshSecrets();
    this.timer = setInterval(() => void this.refreshSecrets().catch((e) => this.o.log.warn({ err: e }, "cluster cache refresh failed")), this.o.refreshMs);
    this.timer.unref();
  }

  stop(): Promise<void> {
    clearInterval(this.timer);
    return this.informer.stop();
  }

  get(name: string): ClusterEntry | undefined {
    return this.entries.get(name);
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  /** Clusters whose spec.secretRef names this Secret. */
  referencing(namespace: string, name: string): string[] {
    return this.clusters()
      .filter((c) => namesSecret(c, namespace, name))
      .map((c) => c.metadata.name ?? "");
  }

  /** Re-reads one cluster (and its Secret) from the store now. */
  async fresh(name: string): Promise<ClusterEntry | undefined> {
    const cluster = await this.informer.refresh(name, () => this.store.get<Cluster>({ gk: GK.cluster, name }));
    const ref = secretKey(cluster);
    if (ref) this.keepSecret(ref, await this.readSecret(ref));
    // the cluster may have moved on to a Secret not read yet meanwhile
    for (let key = secretKey(this.informer.get(name)); key && !this.secrets.has(key); key = secretKey(this.informer.get(name))) await this.load(key);
    this.update([name, ...this.sharing(cluster), ...this.sharing(this.informer.get(name))]);
    return this.entries.get(name);
  }

  /** Records a Cluster this service just wrote or was told about; the Secret is re-read only when the connection settings changed. */
  note(cluster: Cluster): void {
    const name = cluster.metadata.name ?? "";
    const prev = this.entries.get(name);
    const read = !prev || connectionKey(prev.cluster) !== connectionKey(cluster) ? this.fresh(name) : this.informer.refresh(name, () => Promise.resolve(cluster));
    void read.catch((e) => this.o.log.warn({ err: e, cluster: name }, "cluster cache refresh failed"));
  }

  /** Lists every Cluster and reads every Secret they name. */
  refreshAll(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        await this.informer.resync();
        await this.refreshSecrets();
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** Reads every Secret the Clusters name again (forgetting the ones none names any more), then every entry. */
  private async refreshSecrets(): Promise<void> {
    const refs = new Set(this.clusters().map(secretKey).filter((k): k is string => !!k));
    for (const ref of this.secrets.keys()) if (!refs.has(ref)) this.secrets.delete(ref);
    // one read each (the store batches the reads of one moment into one statement)
    const read = await Promise.all([...refs].map(async (ref) => [ref, await this.readSecret(ref)] as const));
    for (const [ref, secret] of read) this.keepSecret(ref, secret);
    this.update([...this.informer.entries()].map(([name]) => name).concat([...this.entries.keys()]));
  }

  /** Brings these clusters' entries up to the informer's Cluster and the Secret it names (read first when it is new). */
  private update(names: Iterable<string>): void {
    const all = this.clusters();
    for (const name of new Set(names)) {
      const cluster = this.informer.get(name);
      if (!cluster) {
        this.remove(name);
        continue;
      }
      const ref = secretKey(cluster);
      if (ref && !this.secrets.has(ref)) {
        // until it is read, the entry stays as it was (one Cluster version and its own credentials)
        void this.load(ref).catch((e) => this.o.log.warn({ err: e, cluster: name }, "reading the secret of a cluster failed"));
        continue;
      }
      const secret = ref ? this.secrets.get(ref) : undefined;
      this.put(cluster, memberEndpoint(cluster, secret, all, this.o.policy), secret?.metadata.resourceVersion ?? "");
    }
  }

  /** Reads a Secret a Cluster newly names (once at a time), then updates the clusters naming it. */
  private load(ref: string): Promise<void> {
    let p = this.loading.get(ref);
    if (!p) {
      p = (async () => {
        try {
          this.keepSecret(ref, await this.readSecret(ref));
        } finally {
          this.loading.delete(ref);
        }
        this.update(this.naming(ref));
      })();
      this.loading.set(ref, p);
    }
    return p;
  }

  private readSecret(ref: string): Promise<KubeObject | undefined> {
    const i = ref.indexOf("/");
    return this.store.get({ gk: GK.secret, namespace: ref.slice(0, i), name: ref.slice(i + 1) });
  }

  /** Keeps a Secret read, unless a newer version of it was read meanwhile. */
  private keepSecret(ref: string, secret: KubeObject | undefined): void {
    const prev = this.secrets.get(ref);
    const [rv, prevRv] = [secret?.metadata.resourceVersion, prev?.metadata.resourceVersion];
    if (rv && prevRv && compareResourceVersions(rv, prevRv) < 0 && secret?.metadata.uid === prev?.metadata.uid) return;
    this.secrets.set(ref, secret);
  }

  private clusters(): Cluster[] {
    return [...this.informer.entries()].map(([, c]) => c);
  }

  /** The other clusters naming the Secret this one names (whose endpoints depend on it: one Secret serves one Cluster). */
  private sharing(cluster: Cluster | undefined): string[] {
    const ref = secretKey(cluster);
    return ref ? this.naming(ref) : [];
  }

  /** The clusters naming the Secret `ref` ("namespace/name"). */
  private naming(ref: string): string[] {
    return this.clusters()
      .filter((c) => secretKey(c) === ref)
      .map((c) => c.metadata.name ?? "");
  }

  private put(cluster: Cluster, endpoint: EndpointResult, secretRv: string): ClusterEntry {
    const name = cluster.metadata.name ?? "";
    const prev = this.entries.get(name);
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
}

/** "namespace/name" of the Secret the cluster names, or undefined. */
function secretKey(c: Cluster | undefined): string | undefined {
  const ref = c?.spec?.secretRef;
  return ref?.name ? `${ref.namespace ?? ""}/${ref.name}` : undefined;
}

/** The spec fields that decide how the member is reached. */
function connectionKey(c: Cluster): string {
  const s = c.spec ?? {};
  return JSON.stringify([s.apiEndpoint, s.secretRef?.namespace, s.secretRef?.name, s.insecureSkipTLSVerification, s.proxyURL]);
}
