import { executionNamespace } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import { manifestsOf } from "@flotilla/member-apply";
import { backoffDelay, type Controller } from "@flotilla/runtime";
import { worksIn, type ObjectStore } from "@flotilla/store";
import type { ClusterCache, ClusterTransition } from "./cluster-cache.js";
import type { Members } from "./members.js";

/** Why a member's Works are compared with what it holds. */
export type CompareWhy = ClusterTransition | "start" | "reconnect" | "new-client";

export interface MemberComparisonsDeps {
  store: ObjectStore;
  /** The cluster cache, the members' clients and the Work controller (built after this, hence read when used). */
  clusters: () => ClusterCache;
  members: () => Members;
  works: () => Controller;
  /** Whether this replica works on the member now (its lease). */
  owns: (cluster: string) => boolean;
  log: Logger;
  /** Timeout of the lists a comparison makes on the member (MEMBER_REQUEST_TIMEOUT). */
  requestTimeoutMs: number;
  /** Timeout of the health probe of a member taken over (CLUSTER_PROBE_TIMEOUT). */
  probeTimeoutMs: number;
  /** How soon a member taken over that does not answer is asked again (WORK_RETRY_INTERVAL). */
  retryIntervalMs: number;
}

/**
 * Compares every Work of a member with what the member holds: on start, when the cluster turns
 * Ready, when it is reached through a new client (endpoint or credential changed), when its
 * informers read it again after failed lists, and when this replica takes the member over. When
 * the member is Ready, each kind its Works use is listed afresh first (one list per member and
 * kind) and only then are its Works reconciled, against that list: a missing or drifted object is
 * applied again, whatever the Works' status said before. Not Ready, its Works are reconciled so
 * their health turns Unknown.
 *
 * A comparison that fails (Postgres away or out of connections, the member not answering its
 * lists) runs again with a growing delay (0.5 .. 30 s): nothing else would wake those Works
 * before the periodic resync. Given up once the service stops or no longer owns the member.
 */
export class MemberComparisons {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopping = false;

  constructor(private readonly d: MemberComparisonsDeps) {}

  /** A change of the member (a cluster transition, a start, a reconnect): its Works are compared with it. */
  fanOut(cluster: string, why: CompareWhy): void {
    const members = this.d.members();
    if (why === "gone") members.drop(cluster);
    if (!this.d.owns(cluster)) return;
    if (why === "ready") members.kick(cluster);
    this.retrying(cluster, why, () => this.compare(cluster, why));
  }

  /**
   * A member taken over from another replica: its Works are compared with it as at a start, but
   * only once it answers. While the Cluster still says Ready (the last owner's word) and the
   * member does not answer, comparing would mark its Works not Applied on the strength of a probe
   * the Ready thresholds have not weighed yet; they keep what they say, and the member is asked
   * again every `retryIntervalMs` until it answers or its Ready condition turns (which reconciles
   * its Works by itself).
   */
  takeOver(cluster: string): void {
    this.retrying(cluster, "take-over", () => this.takenOver(cluster));
  }

  /** Stops retrying (the service stops). */
  stop(): void {
    this.stopping = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private async compare(cluster: string, why: CompareWhy): Promise<void> {
    const { store, log } = this.d;
    const works = worksIn(store);
    const items = await works.list({ namespace: executionNamespace(cluster) });
    const entry = this.d.clusters().get(cluster);
    if ((why === "start" || why === "ready" || why === "new-client") && items.length && entry?.ready && !entry.pull && !entry.deleting && entry.endpoint.ok) {
      const kinds = new Map<string, { apiVersion: string; kind: string }>();
      for (const w of items) {
        if (w.metadata.deletionTimestamp) continue;
        for (const m of manifestsOf(w)) kinds.set(`${m.apiVersion}/${m.kind}`, { apiVersion: m.apiVersion, kind: m.kind });
      }
      const members = this.d.members();
      const listed = await members.relist(cluster, members.client(cluster, entry.endpoint.endpoint), [...kinds.values()], this.d.requestTimeoutMs);
      log.info({ cluster, reason: why, kinds: kinds.size, listed }, "member listed; comparing its works with it");
    }
    for (const w of items) this.d.works().add(works.key(w));
    if (items.length) log.info({ cluster, reason: why, works: items.length }, "reconciling the works of a cluster");
  }

  private async takenOver(cluster: string): Promise<void> {
    if (!this.d.owns(cluster)) return;
    const clusters = this.d.clusters();
    const entry = clusters.get(cluster);
    if (entry?.ready && !entry.pull && !entry.deleting && entry.endpoint.ok) {
      const h = await this.d.members().client(cluster, entry.endpoint.endpoint).health({ timeoutMs: this.d.probeTimeoutMs });
      if (!h.healthy && clusters.get(cluster)?.ready) {
        this.d.log.info({ cluster }, "member taken over does not answer; its works are compared once it does");
        this.later(this.d.retryIntervalMs, () => this.takeOver(cluster));
        return;
      }
    }
    await this.compare(cluster, "start");
  }

  /** Runs `run`, and again with a growing delay while it fails, until the service stops or the member is no longer this replica's. */
  private retrying(cluster: string, why: string, run: () => Promise<void>, failures = 0): void {
    run().catch((e: unknown) => {
      if (this.stopping || !this.d.owns(cluster)) return;
      const retryInMs = backoffDelay(failures + 1, { baseMs: 500, maxMs: 30_000 });
      this.d.log.warn({ err: e, cluster, reason: why, failures: failures + 1, retryInMs }, "comparing the works of a cluster with the member failed; retrying");
      this.later(retryInMs, () => this.retrying(cluster, why, run, failures + 1));
    });
  }

  /** Runs `fn` after `ms`, unless the service stops first. */
  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    t.unref();
    this.timers.add(t);
  }
}
