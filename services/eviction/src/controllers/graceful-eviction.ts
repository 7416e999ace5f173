import { bindingsIn } from "@flotilla/store";
import { BadRequestError } from "@flotilla/api";
import type { AnyResourceBinding } from "@flotilla/api";
import { after, done, terminal, type Reconciler } from "@flotilla/runtime";
import type { Config } from "../config.js";
import { assessTasks, taskTimeoutMs, type TaskOutcome } from "../logic/assess.js";
import { clusterState, type ClusterState } from "../logic/cluster-state.js";
import type { ControllerDeps } from "./deps.js";

export const name = "graceful-eviction";

export const EventReasonTaskRemoved = "GracefulEvictionTaskRemoved";
export const EventReasonTaskKept = "GracefulEvictionTaskKept";

export interface Deps extends ControllerDeps {
  /** Told of each task removed (for the metrics), with the verdict's why. */
  onTaskRemoved?: (why: string) => void;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)}s`;
}

function removedMessage(o: TaskOutcome, cfg: Config, scheduled: string[]): string | undefined {
  const from = o.task.fromCluster;
  const v = o.verdict;
  if (v.action !== "drop") return undefined;
  switch (v.why) {
    case "ReplacementHealthy":
      return `Graceful eviction task from cluster ${from} removed: the replacement on ${scheduled.join(", ")} is healthy`;
    case "Timeout":
      return `Graceful eviction task from cluster ${from} removed: its timeout (${seconds(taskTimeoutMs(o.task, cfg.GRACEFUL_EVICTION_TIMEOUT))}) passed`;
    case "SuppressDeletionFalse":
      return `Graceful eviction task from cluster ${from} removed: suppressDeletion is false`;
    case "ScheduledAgain":
      return `Graceful eviction task from cluster ${from} removed: the cluster is scheduled again`;
    case "ClusterRecovered":
      return `Graceful eviction task from cluster ${from} removed: its timeout passed, nothing replaced it and the cluster recovered; it is scheduled again with ${v.restore.replicas ?? 0} replicas`;
  }
}

/**
 * The graceful-eviction controller (key = `rb/<ns>/<name>` or `crb/<name>`): assesses each
 * graceful-eviction task (see assessTasks), writes the kept tasks (and any recovered cluster
 * put back) only when something changed, starting from the binding just read and carrying its
 * resourceVersion; on a conflict it reads and assesses again at once. Comes back (a durable
 * timer) at min(timeout/10, the soonest expiry) while tasks wait.
 */
export function gracefulEviction(d: Deps): Reconciler<string> {
  const bindings = bindingsIn(d.store);
  return {
    name,
    async reconcile(key, { log }) {
      if (!bindings.ref(key)) terminal(new BadRequestError(`invalid key ${JSON.stringify(key)}`));
      const states = new Map<string, ClusterState>();
      // decided again on every attempt: what it leaves here describes the attempt that counts
      let a: ReturnType<typeof assessTasks> | undefined;
      let read: AnyResourceBinding | undefined;
      const r = await bindings.mutate(key, async (next) => {
        a = undefined;
        read = structuredClone(next);
        if (next.metadata.deletionTimestamp || !(next.spec?.gracefulEvictionTasks?.length ?? 0)) return undefined;
        const tolerations = next.spec?.placement?.clusterTolerations;
        for (const t of next.spec!.gracefulEvictionTasks!) {
          const from = t.fromCluster ?? "";
          if (!states.has(from)) states.set(from, clusterState(await d.clusters.get(from), tolerations));
        }
        a = assessTasks({ spec: next.spec!, status: next.status, generation: next.metadata.generation, clusters: states, timeoutMs: d.cfg.GRACEFUL_EVICTION_TIMEOUT, now: d.now().getTime() });
        if (!a.changed) return undefined;
        next.spec!.clusters = a.clusters;
        if (a.tasks.length) next.spec!.gracefulEvictionTasks = a.tasks;
        else delete next.spec!.gracefulEvictionTasks;
        return next;
      });
      const stored = r.obj;
      const b = read;
      if (!stored || !a || !b) return done();
      const assessed = a as ReturnType<typeof assessTasks>;
      if (r.written) {
        const scheduled = assessed.clusters.map((c) => c.name ?? "");
        for (const o of assessed.outcomes) if (o.verdict.action === "drop") d.onTaskRemoved?.(o.verdict.why);
        for (const o of assessed.outcomes) {
          const msg = removedMessage(o, d.cfg, scheduled);
          if (!msg) continue;
          log.info({ binding: key, kind: stored.kind, cluster: o.task.fromCluster, why: o.verdict.why }, "graceful-eviction task removed");
          await d.events.normal(stored, EventReasonTaskRemoved, msg);
        }
      }
      for (const o of assessed.outcomes) {
        if (o.verdict.action === "keep" && o.verdict.why === "NoReplacement") {
          const want = b.spec?.replicas ?? 0;
          const have = (b.spec?.clusters ?? []).reduce((s, c) => s + (c.replicas ?? 0), 0);
          await d.events.warning(
            stored,
            EventReasonTaskKept,
            `Graceful eviction task from cluster ${o.task.fromCluster} kept past its timeout: nothing could be scheduled in its place (${(b.spec?.clusters ?? []).length} clusters, ${have} of ${want} replicas) and the cluster has not recovered; its workload keeps running there`,
          );
        }
      }
      return assessed.retryMs === undefined ? done() : after(assessed.retryMs);
    },
  };
}
