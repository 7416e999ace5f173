/**
 * When this controller first saw each cluster's current heartbeat (upstream's probeTimestamp in
 * its cluster health map): a new or changed `lastHeartbeatTime` is seen now; one seen before
 * keeps the time it was first seen. Deliberately this process's own memory, as upstream's: after
 * a restart every cluster starts a fresh grace period from the restart, so a control plane that
 * was down longer than the grace period does not find the whole fleet stale (its members kept
 * running; only nobody was writing their heartbeats). Time is passed in.
 */
export class HeartbeatObserver {
  private readonly seen = new Map<string, { beat: string; at: number }>();

  /** The time (ms) this controller first saw `beat` as the cluster's heartbeat; undefined without one. */
  observe(cluster: string, beat: string | undefined, now: number): number | undefined {
    if (!beat) return undefined;
    const cur = this.seen.get(cluster);
    if (cur && cur.beat === beat) return cur.at;
    this.seen.set(cluster, { beat, at: now });
    return now;
  }

  forget(cluster: string): void {
    this.seen.delete(cluster);
  }
}
