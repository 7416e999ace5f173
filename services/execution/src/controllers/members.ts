import type { KubeObject } from "@flotilla/api";
import { MemberClientCache, type InformerEvent, type MemberClient, type MemberClientOptions, type MemberEndpoint, type MemberInformer } from "@flotilla/kube";
import type { Logger } from "@flotilla/log";
import { nodeCapacities, type NodeCapacity } from "../logic/estimate.js";
import { MemberObjects, type AppliedRecord, type MemberState, type NodeLike, type PodLike } from "@flotilla/member-apply";

/** A member's nodes and pods as last listed, reduced to what the estimator needs. */
export interface CapacitySnapshot {
  at: number;
  nodes: NodeCapacity[];
}

interface Member {
  objects: MemberObjects;
  snapshot?: CapacitySnapshot;
  refreshing?: Promise<CapacitySnapshot>;
}

export interface MembersOptions {
  log: Logger;
  client?: Omit<MemberClientOptions, keyof MemberEndpoint | "name">;
  /** A managed member object changed (informer event or re-list difference). */
  onObject?: (cluster: string, type: InformerEvent, obj: KubeObject) => void;
  /** Re-list period of the member informers (server-side watch timeout), seconds. */
  watchTimeoutSeconds?: number;
  /** An informer of the cluster listed it again after failed lists (the member is readable again). */
  onReconnect?: (cluster: string) => void;
  /** The cluster's client was replaced (endpoint or credential changed): its informers started over. */
  onNewClient?: (cluster: string) => void;
}

export { MANAGED_SELECTOR } from "@flotilla/member-apply";

/**
 * Everything this service keeps per member: one client per endpoint+credential (replaced when
 * either changes), the informers of managed objects by kind (started when a Work first needs
 * the kind), the records of what was applied, and the capacity snapshot for the estimator.
 */
export class Members {
  private readonly clients: MemberClientCache;
  private readonly members = new Map<string, Member>();
  private dropping?: string;

  constructor(private readonly o: MembersOptions) {
    this.clients = new MemberClientCache({
      defaults: o.client,
      onInvalidate: (c) => {
        this.reset(c);
        if (this.dropping !== c) this.o.onNewClient?.(c);
      },
    });
  }

  private member(cluster: string): Member {
    let m = this.members.get(cluster);
    if (!m) {
      const objects = new MemberObjects({
        watchTimeoutSeconds: this.o.watchTimeoutSeconds,
        onChange: (type, obj) => this.o.onObject?.(cluster, type, obj),
        onError: (err, kind) => this.o.log.debug({ err, cluster, kind }, "member list failed; retrying"),
        onReconnect: () => this.o.onReconnect?.(cluster),
      });
      this.members.set(cluster, (m = { objects }));
    }
    return m;
  }

  /** The cluster's client for this endpoint (made, or replaced when the endpoint or credential changed). */
  client(cluster: string, endpoint: MemberEndpoint): MemberClient {
    return this.clients.get(cluster, endpoint);
  }

  /** The informer of managed `kind` objects on the cluster, started on first use. */
  informer(cluster: string, client: MemberClient, apiVersion: string, kind: string): MemberInformer {
    return this.member(cluster).objects.informer(client, apiVersion, kind);
  }

  /** One cluster's informers and records, as the shared applier uses them. */
  view(cluster: string): MemberState {
    return this.member(cluster).objects;
  }

  /** The informer if one runs (no side effects). */
  peekInformer(cluster: string, apiVersion: string, kind: string): MemberInformer | undefined {
    return this.members.get(cluster)?.objects.peekInformer(apiVersion, kind);
  }

  /** Cuts the informers' backoff short (the member just became Ready). */
  kick(cluster: string): void {
    for (const inf of this.members.get(cluster)?.objects.allInformers() ?? []) inf.kick();
  }

  /**
   * Lists the member afresh for every given kind it serves (informers started where missing,
   * running ones asked to list again) and waits, at most `timeoutMs`, for those lists: one list
   * per member and kind, however many Works use it. Until its list is back, an informer is not
   * `synced` and the Works wait for it instead of trusting what was cached before. Resolves
   * with whether every list succeeded.
   */
  async relist(cluster: string, client: MemberClient, kinds: { apiVersion: string; kind: string }[], timeoutMs: number): Promise<boolean> {
    const infs: MemberInformer[] = [];
    let discovered = true;
    for (const { apiVersion, kind } of kinds) {
      const res = await client.resourceFor(apiVersion, kind).catch(() => ((discovered = false), undefined));
      if (!res) continue; // not served (or discovery failed): the Work's reconcile reports it
      const existing = this.peekInformer(cluster, apiVersion, kind);
      if (existing) existing.relist();
      infs.push(existing ?? this.informer(cluster, client, apiVersion, kind));
    }
    const ok = await Promise.all(infs.map((i) => i.waitListed(timeoutMs)));
    return discovered && ok.every(Boolean);
  }

  record(cluster: string, key: string): AppliedRecord | undefined {
    return this.members.get(cluster)?.objects.record(key);
  }

  setRecord(cluster: string, key: string, r: AppliedRecord | undefined): void {
    this.member(cluster).objects.setRecord(key, r);
  }

  /** Stores the capacity snapshot computed from freshly listed nodes and pods. */
  setCapacity(cluster: string, nodes: NodeLike[], pods: PodLike[], at = Date.now()): CapacitySnapshot {
    const snap = { at, nodes: nodeCapacities(nodes, pods) };
    this.member(cluster).snapshot = snap;
    return snap;
  }

  /**
   * The capacity snapshot, re-listed through `client` when older than `maxAgeMs` (one listing
   * at a time per cluster; callers share it).
   */
  async capacity(cluster: string, client: MemberClient, maxAgeMs: number, signal?: AbortSignal): Promise<CapacitySnapshot> {
    const m = this.member(cluster);
    if (m.snapshot && Date.now() - m.snapshot.at <= maxAgeMs) return m.snapshot;
    m.refreshing ??= (async () => {
      try {
        // stamped when the listing starts: every pod bound before then is in it
        const at = Date.now();
        const [nodes, pods] = await Promise.all([client.listNodes({ signal }), client.listPods({ signal })]);
        return this.setCapacity(cluster, nodes.items as NodeLike[], pods.items as PodLike[], at);
      } finally {
        m.refreshing = undefined;
      }
    })();
    return m.refreshing;
  }

  /** The last capacity snapshot, however old (undefined when there never was one). */
  lastCapacity(cluster: string): CapacitySnapshot | undefined {
    return this.members.get(cluster)?.snapshot;
  }

  /** Stops the cluster's informers and forgets its records (client replaced, or cluster gone). */
  private reset(cluster: string): void {
    const m = this.members.get(cluster);
    if (!m) return;
    this.members.delete(cluster);
    void m.objects.stop();
  }

  /**
   * Another replica works on the cluster now: stop its informers and forget its records, but
   * keep its client (this replica's estimator still reads the member).
   */
  stopWatching(cluster: string): void {
    this.reset(cluster);
  }

  /** The cluster left: close its client, stop its informers. */
  drop(cluster: string): void {
    this.dropping = cluster;
    try {
      this.clients.drop(cluster);
    } finally {
      this.dropping = undefined;
    }
    this.reset(cluster);
  }

  clusters(): string[] {
    return [...new Set([...this.clients.clusters(), ...this.members.keys()])];
  }

  async close(): Promise<void> {
    const all = [...this.members.values()];
    this.members.clear();
    await Promise.all(all.map((m) => m.objects.stop()));
    this.clients.closeAll();
  }
}
