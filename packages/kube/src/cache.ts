import { createHash } from "node:crypto";
import { MemberClient, type MemberClientOptions, type MemberEndpoint } from "./client.js";

/** Identifies an endpoint + credential without keeping the credential in a comparable string. */
export function endpointFingerprint(e: MemberEndpoint): string {
  const h = createHash("sha256");
  h.update(JSON.stringify([e.server, e.token ?? "", e.caData ?? "", !!e.insecureSkipTLSVerify, e.proxyURL ?? ""]));
  return h.digest("hex");
}

export interface ClientCacheOptions {
  /** Defaults for every client (timeout, pool size, field manager). */
  defaults?: Omit<MemberClientOptions, keyof MemberEndpoint | "name">;
  /** Called after a cluster's client was replaced (its endpoint or credential changed) or dropped. */
  onInvalidate?: (cluster: string) => void;
}

/**
 * One MemberClient per cluster, reused while the cluster's endpoint and credential stay the
 * same; a change (Cluster spec or its Secret) closes the old client and makes a new one.
 */
export class MemberClientCache {
  private readonly clients = new Map<string, { fp: string; client: MemberClient }>();

  constructor(private readonly o: ClientCacheOptions = {}) {}

  /** The cluster's client for this endpoint, made or replaced as needed. */
  get(cluster: string, endpoint: MemberEndpoint): MemberClient {
    const fp = endpointFingerprint(endpoint);
    const cur = this.clients.get(cluster);
    if (cur && cur.fp === fp && !cur.client.isClosed) return cur.client;
    const client = new MemberClient({ ...this.o.defaults, ...endpoint, name: cluster });
    this.clients.set(cluster, { fp, client });
    if (cur) {
      cur.client.close();
      this.o.onInvalidate?.(cluster);
    }
    return client;
  }

  /** The cluster's current client without changing anything. */
  peek(cluster: string): MemberClient | undefined {
    return this.clients.get(cluster)?.client;
  }

  /** Closes and forgets the cluster's client (the cluster is gone). */
  drop(cluster: string): void {
    const cur = this.clients.get(cluster);
    if (!cur) return;
    this.clients.delete(cluster);
    cur.client.close();
    this.o.onInvalidate?.(cluster);
  }

  get size(): number {
    return this.clients.size;
  }

  clusters(): string[] {
    return [...this.clients.keys()];
  }

  closeAll(): void {
    for (const c of this.clients.keys()) this.drop(c);
  }
}
