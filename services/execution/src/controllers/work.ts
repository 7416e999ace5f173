import {
  GK,
  ExecutionControllerFinalizer,
  clusterOfExecutionNamespace,
  setCondition,
  type Work,
} from "@flotilla/api";
import type { ObjectStore } from "@flotilla/store";
import { SpanKind, after, done, inSpan, type Reconciler, type Result, type SeenVersions } from "@flotilla/runtime";
import {
  appliedCondition,
  applyWork,
  deleteWork,
  dispatchingCondition,
  healthUnknown,
  isSuspended,
  manifestsOf,
  retryable,
  sameWorkStatus,
  type WorkStatusJson,
} from "@flotilla/member-apply";
import type { ClusterCache } from "./cluster-cache.js";
import type { Members } from "./members.js";

export const name = "execution";

export interface WorkDeps {
  store: ObjectStore;
  clusters: ClusterCache;
  members: Members;
  /** Versions of Works this controller wrote (their wake-ups are echoes). */
  seen: SeenVersions;
  /**
   * When the member cannot be worked on (cluster not Ready, unreachable, no credential), come
   * back after this (a durable timer) rather than hold the wake-up in backoff: a cluster with
   * thousands of Works must not fill the consumer's unacked window. Becoming Ready reconciles
   * the cluster's Works at once anyway.
   */
  retryMs: number;
  /**
   * How long a reconcile waits for the member's first (or fresh) list of a kind before it gives
   * up for now (default 10 s). A member that just failed a list is not waited for.
   */
  listWaitMs?: number;
  /**
   * Whether this replica works on the cluster now (member sharding; default: every cluster).
   * Another replica's cluster is left alone: its owner reconciles its Works, and a new owner
   * compares all of them with the member when it takes the cluster over.
   */
  owns?: (cluster: string) => boolean;
  now?: () => Date;
}

function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf("/");
  return { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/**
 * The execution controller (Karmada's execution + work-status controllers in one): applies every
 * manifest of a Work in `karmada-es-<cluster>` to that member, keeps the Work's status
 * (Dispatching, Applied, manifestStatuses with the member object's status and health) current
 * as member informers report changes, and on deletion removes the member objects before
 * releasing the `karmada.io/execution-controller` finalizer, or keeps it while the cluster is not
 * Ready and not terminating.
 */
export function executionController(d: WorkDeps): Reconciler<string> {
  const now = d.now ?? (() => new Date());
  const listWaitMs = d.listWaitMs ?? 10_000;
  const owns = d.owns ?? (() => true);

  async function writeStatus(work: Work, key: string, status: WorkStatusJson): Promise<Work> {
    if (sameWorkStatus(work.status as WorkStatusJson | undefined, status)) return work;
    // a conflict (the Work changed in between) is retryable: the runner reconciles again from a fresh read
    const out = await d.store.updateStatus<Work>({ ...work, status: status as Work["status"] });
    d.seen.wrote(key, out.metadata.resourceVersion);
    return out;
  }

  async function release(work: Work, key: string): Promise<void> {
    const finalizers = (work.metadata.finalizers ?? []).filter((f) => f !== ExecutionControllerFinalizer);
    const out = await d.store.update<Work>({ ...work, metadata: { ...work.metadata, finalizers } });
    d.seen.wrote(key, out.metadata.resourceVersion);
  }

  async function reconcileDeletion(work: Work, key: string, cluster: string): Promise<Result> {
    if (!(work.metadata.finalizers ?? []).includes(ExecutionControllerFinalizer)) return done();
    const entry = await d.clusters.fresh(cluster);
    if (entry && entry.ready && !entry.deleting) {
      if (!entry.endpoint.ok) return after(d.retryMs);
      if (!owns(cluster)) return done();
      try {
        await deleteWork(work, d.members.client(cluster, entry.endpoint.endpoint), d.members.view(cluster));
      } catch (e) {
        if (retryable(e)) return after(d.retryMs);
        throw e;
      }
    } else if (entry && !entry.deleting) {
      // The member may come back with the object still there: keep the finalizer until it can be removed.
      return after(d.retryMs);
    }
    // Cluster terminating (or gone altogether): release without contacting it.
    await release(work, key);
    return done();
  }

  return {
    name,
    async reconcile(key, ctx): Promise<Result> {
      const { namespace, name: workName } = splitKey(key);
      const cluster = clusterOfExecutionNamespace(namespace);
      if (!cluster) return done();
      if (!owns(cluster)) return done();
      let work = await d.store.get<Work>({ gk: GK.work, namespace, name: workName });
      if (!work) {
        d.seen.forget(key);
        return done();
      }
      // a Pull cluster's agent applies its Works, holds their finalizer and writes their status
      if ((d.clusters.get(cluster) ?? (await d.clusters.fresh(cluster)))?.pull) return done();
      if (work.metadata.deletionTimestamp) return reconcileDeletion(work, key, cluster);

      if (!(work.metadata.finalizers ?? []).includes(ExecutionControllerFinalizer)) {
        work = await d.store.update<Work>({ ...work, metadata: { ...work.metadata, finalizers: [...(work.metadata.finalizers ?? []), ExecutionControllerFinalizer] } });
        d.seen.wrote(key, work.metadata.resourceVersion);
      }

      const t = now();
      const gen = work.metadata.generation;
      const current = (work.status ?? {}) as WorkStatusJson;
      const suspended = isSuspended(work);
      let conditions = setCondition(current.conditions, dispatchingCondition(suspended, gen), t);
      if (suspended) {
        await writeStatus(work, key, { ...current, conditions });
        return done();
      }

      const entry = d.clusters.get(cluster) ?? (await d.clusters.fresh(cluster));
      if (!entry || !entry.ready || !entry.endpoint.ok) {
        ctx.log.debug({ cluster, reason: !entry ? "cluster not found" : !entry.ready ? "cluster not ready" : entry.endpoint.ok ? "" : entry.endpoint.reason }, "work waits for its cluster");
        // What the member holds cannot be read now: its objects' health is not known.
        await writeStatus(work, key, { ...current, conditions, ...(current.manifestStatuses ? { manifestStatuses: healthUnknown(current.manifestStatuses) } : {}) });
        return after(d.retryMs);
      }
      const client = d.members.client(cluster, entry.endpoint.endpoint);
      if (!owns(cluster)) return done(); // the lease ended while this reconcile read

      const { statuses, errors, retry } = await inSpan(
        "apply to member",
        { kind: SpanKind.CLIENT, attributes: { "flotilla.cluster": cluster, "flotilla.work": `${work.metadata.namespace}/${work.metadata.name}`, "flotilla.manifests": manifestsOf(work).length } },
        () => applyWork({ work, cluster, client, state: d.members.view(cluster), signal: ctx.signal, previous: current.manifestStatuses ?? [], listWaitMs }),
      );
      conditions = setCondition(conditions, appliedCondition(manifestsOf(work).length, errors, gen), t);
      await writeStatus(work, key, { conditions, manifestStatuses: statuses });
      if (retry) {
        ctx.log.debug({ cluster, errors }, "applying to the member failed; retrying");
        return after(d.retryMs);
      }
      return done();
    },
  };
}
