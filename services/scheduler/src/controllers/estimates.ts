import type { AnyResourceBinding, ReplicaRequirements } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import { requirementsKey, wantsEstimates, type EstimatorAnswer } from "../logic/estimates.js";
import type { SchedulerMetrics } from "./metrics.js";

/** One cluster's answer; `maxReplicas` -1 means "could not tell". */
export interface ClusterEstimate {
  name: string;
  maxReplicas: number;
  error?: string;
  /** Age of the member snapshot behind the answer. */
  snapshotAgeMs?: number;
}

/**
 * The replica estimator the scheduler asks: `(clusters, replicaRequirements) → max replicas per
 * cluster`, with a deadline. The execution service serves it over gRPC (`EstimatorClient` of
 * `@flotilla/proto`); an empty cluster list asks about every joined cluster.
 */
export interface ReplicaEstimator {
  maxAvailableReplicas(clusters: string[], requirements?: ReplicaRequirements, o?: { deadlineMs?: number }): Promise<ClusterEstimate[]>;
}

export interface EstimateCacheOptions {
  /** Deadline of one estimator call. */
  deadlineMs: number;
  /** How long one answer serves every binding with the same replica requirements (a scheduling round). */
  ttlMs: number;
  /** After a failed call, the estimator is not asked again for this long (the general estimator answers alone). */
  retryAfterMs: number;
  log: Logger;
  metrics: SchedulerMetrics;
  now?: () => number;
}

interface Entry {
  at: number;
  answer: Promise<EstimatorAnswer | undefined>;
}

/**
 * Asks the estimator at most once per replica-requirements shape per `ttlMs`, and never for
 * bindings whose schedule cannot depend on it (see `wantsEstimates`). When the estimator is not
 * configured, fails, or misses its deadline, the answer is undefined and `schedule()` relies on
 * the general estimator over each Cluster's `resourceSummary` (Karmada takes the minimum over
 * the estimators that answered).
 */
export class EstimateCache {
  private readonly entries = new Map<string, Entry>();
  private downUntil = 0;
  private readonly now: () => number;

  constructor(
    private readonly estimator: ReplicaEstimator | undefined,
    private readonly o: EstimateCacheOptions,
  ) {
    this.now = o.now ?? Date.now;
  }

  /** The answer for the binding's replica shape, with when each cluster's snapshot was taken (see `usableEstimates`). */
  async forBinding(binding: AnyResourceBinding): Promise<EstimatorAnswer | undefined> {
    if (!this.estimator || !wantsEstimates(binding)) {
      this.o.metrics.estimates.skipped++;
      return undefined;
    }
    const now = this.now();
    if (now < this.downUntil) {
      this.o.metrics.estimates.fallback++;
      return undefined;
    }
    const key = requirementsKey(binding);
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.o.ttlMs) {
      this.o.metrics.estimates.cached++;
      return hit.answer;
    }
    if (this.entries.size > 1024) this.prune(now);
    const answer = this.ask(binding.spec?.replicaRequirements);
    this.entries.set(key, { at: now, answer });
    return answer;
  }

  private async ask(requirements: ReplicaRequirements | undefined): Promise<EstimatorAnswer | undefined> {
    try {
      // the snapshot's age is measured by the estimator during the call: counted from the call's
      // start, the time it was taken is never later than it was
      const asked = this.now();
      const res = await this.estimator!.maxAvailableReplicas([], requirements, { deadlineMs: this.o.deadlineMs });
      this.o.metrics.estimates.ok++;
      const replicas = new Map<string, number>();
      const takenAt = new Map<string, number>();
      for (const c of res) {
        replicas.set(c.name, c.maxReplicas);
        takenAt.set(c.name, asked - (c.snapshotAgeMs ?? 0));
      }
      return { replicas, takenAt };
    } catch (e) {
      this.o.metrics.estimates.error++;
      const wasUp = this.now() >= this.downUntil;
      this.downUntil = this.now() + this.o.retryAfterMs;
      // forget every pending answer so the next round asks again once the estimator is back
      this.entries.clear();
      if (wasUp) this.o.log.warn({ err: e, retryAfterMs: this.o.retryAfterMs }, "replica estimator unavailable; using the clusters' resource summaries");
      return undefined;
    }
  }

  private prune(now: number): void {
    for (const [k, e] of this.entries) if (now - e.at >= this.o.ttlMs) this.entries.delete(k);
  }
}
