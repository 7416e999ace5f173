import { setMaxListeners } from "node:events";
import {
  ExecutionControllerFinalizer,
  KARMADA,
  clusterOfExecutionNamespace,
  groupKind,
  isConflict,
  type KubeObject,
  type Work,
} from "@flotilla/api";
import { coveredBy, isKubeConflict, isKubeUnreachable, type ApplyResult, type KubeApiError, type MemberClient } from "@flotilla/kube";
import type { ObjectStore } from "@flotilla/store";
import { after, done, type Reconciler, type Result, type SeenVersions } from "@flotilla/runtime";
import { setCondition } from "../logic/conditions.js";
import { interpretHealth, reflectStatus } from "../logic/health.js";
import {
  appliedCondition,
  desiredObject,
  digest,
  dispatchingCondition,
  healthUnknown,
  identifierOf,
  isManaged,
  isSuspended,
  manifestsOf,
  objectVersion,
  overwrites,
  preservesOnDeletion,
  sameWorkStatus,
  updateVerdict,
  withoutClaim,
  type ManifestStatus,
  type WorkStatusJson,
} from "../logic/work.js";
import type { ClusterCache } from "./cluster-cache.js";
import type { Members } from "./members.js";

export const name = "execution";
export const WORK_GK = groupKind(KARMADA.work);

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
  now?: () => Date;
}

/** A failure the runner should retry (the member was unreachable, a write raced). */
class RetryableError extends Error {
  override readonly name = "RetryableError";
}

/** The member's objects of a kind could not be listed: what it holds is not known. */
class MemberUnreadableError extends Error {
  override readonly name = "MemberUnreadableError";
}

function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf("/");
  return { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

const objectKeyOf = (o: KubeObject) => `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;

/** Labels and annotations of the desired object, for the metadata drift check. */
function metaOnly(o: KubeObject): KubeObject {
  return { apiVersion: o.apiVersion, kind: o.kind, metadata: { labels: o.metadata.labels, annotations: o.metadata.annotations } };
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Whether retrying could help: the member did not answer, answered 5xx/429, or a write raced. */
function retryable(e: unknown): boolean {
  if (isKubeUnreachable(e) || isKubeConflict(e) || e instanceof MemberUnreadableError) return true;
  const code = (e as Partial<KubeApiError>).code;
  return e instanceof Error && e.name === "KubeApiError" && typeof code === "number" && (code >= 500 || code === 429);
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

  async function writeStatus(work: Work, key: string, status: WorkStatusJson): Promise<Work> {
    if (sameWorkStatus(work.status as WorkStatusJson | undefined, status)) return work;
    try {
      const out = await d.store.updateStatus<Work>({ ...work, status: status as Work["status"] });
      d.seen.wrote(key, out.metadata.resourceVersion);
      return out;
    } catch (e) {
      if (isConflict(e)) throw new RetryableError(`the Work changed while its status was written; retrying`);
      throw e;
    }
  }

  async function release(work: Work, key: string): Promise<void> {
    const finalizers = (work.metadata.finalizers ?? []).filter((f) => f !== ExecutionControllerFinalizer);
    try {
      const out = await d.store.update<Work>({ ...work, metadata: { ...work.metadata, finalizers } });
      d.seen.wrote(key, out.metadata.resourceVersion);
    } catch (e) {
      if (isConflict(e)) throw new RetryableError("the Work changed while its finalizer was removed; retrying");
      throw e;
    }
  }

  async function deleteFromMember(cluster: string, client: MemberClient, work: Work): Promise<void> {
    const preserve = preservesOnDeletion(work);
    for (const m of manifestsOf(work)) {
      const desired = desiredObject(work, m);
      const observed = await client.get(desired);
      if (observed && isManaged(observed)) {
        if (preserve) await client.replace(withoutClaim(observed));
        else await client.delete(desired, { propagationPolicy: "Background", preconditions: { uid: observed.metadata.uid } }).catch((e) => {
          // a precondition failure means it was replaced by someone else since: not ours to delete
          if (!isKubeConflict(e)) throw e;
        });
      }
      d.members.setRecord(cluster, objectKeyOf(desired), undefined);
      d.members.peekInformer(cluster, desired.apiVersion, desired.kind)?.forget(desired.metadata.namespace, desired.metadata.name ?? "");
    }
  }

  async function reconcileDeletion(work: Work, key: string, cluster: string): Promise<Result> {
    if (!(work.metadata.finalizers ?? []).includes(ExecutionControllerFinalizer)) return done();
    const entry = await d.clusters.fresh(cluster);
    if (entry && entry.ready && !entry.deleting) {
      if (!entry.endpoint.ok) return after(d.retryMs);
      try {
        await deleteFromMember(cluster, d.members.client(cluster, entry.endpoint.endpoint), work);
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

  async function applyAll(work: Work, cluster: string, client: MemberClient, parent: AbortSignal, previous: readonly ManifestStatus[]): Promise<{ statuses: ManifestStatus[]; errors: string[]; retry: boolean }> {
    const manifests = manifestsOf(work);
    // one signal for every request of this reconcile (each request listens on it)
    const ac = new AbortController();
    setMaxListeners(0, ac.signal);
    const abort = () => ac.abort(parent.reason);
    if (parent.aborted) abort();
    else parent.addEventListener("abort", abort, { once: true });
    const signal = ac.signal;
    const statuses: ManifestStatus[] = [];
    const errors: string[] = [];
    let retry = false;
    await Promise.all(
      manifests.map(async (m, i) => {
        const desired = desiredObject(work, m);
        try {
          const res = await client.resourceFor(desired.apiVersion, desired.kind);
          if (!res) throw new Error(`the member does not serve ${desired.kind} in ${desired.apiVersion}`);
          const inf = d.members.informer(cluster, client, desired.apiVersion, desired.kind);
          // Only a cache listed since the last start, reconnect or return of the member says what
          // it holds; a cache from before (or none yet) is waited for, never taken as the truth.
          if (!inf.synced && (inf.lastError !== undefined || !(await inf.waitListed(listWaitMs)))) {
            throw new MemberUnreadableError(`the member's ${desired.kind} objects could not be listed${inf.lastError ? `: ${inf.lastError}` : ""}`);
          }
          const ns = res.namespaced ? desired.metadata.namespace : undefined;
          const observed = inf.get(ns, desired.metadata.name ?? "");
          const objKey = objectKeyOf(desired);
          const dg = digest(desired);
          const rec = d.members.record(cluster, objKey);
          let object: KubeObject;
          if (observed && rec && rec.digest === dg && rec.version === objectVersion(observed) && coveredBy(metaOnly(desired), observed)) {
            object = observed;
          } else {
            const r: ApplyResult = await client.apply(desired, {
              observed,
              mayUpdate: (o) => updateVerdict(o, overwrites(work, m), cluster),
              force: !!rec && rec.digest !== dg,
              signal,
            });
            object = r.object;
            object.apiVersion ??= desired.apiVersion;
            object.kind ??= desired.kind;
            inf.observe(object);
            d.members.setRecord(cluster, objKey, { digest: dg, version: objectVersion(object) });
          }
          const status = reflectStatus(object);
          statuses.push({ identifier: identifierOf(i, desired, res.name), ...(status ? { status } : {}), health: interpretHealth(object) });
        } catch (e) {
          if (retryable(e)) {
            retry = true;
            // what the member holds is not known now: the last observation stays, not Healthy
            const prev = previous.find((p) => p.identifier.ordinal === i && p.identifier.kind === desired.kind && p.identifier.name === (desired.metadata.name ?? ""));
            if (prev) statuses.push(...healthUnknown([prev]));
          }
          errors.push(describe(e));
        }
      }),
    );
    parent.removeEventListener("abort", abort);
    statuses.sort((a, b) => a.identifier.ordinal - b.identifier.ordinal);
    return { statuses, errors, retry };
  }

  return {
    name,
    async reconcile(key, ctx): Promise<Result> {
      const { namespace, name: workName } = splitKey(key);
      const cluster = clusterOfExecutionNamespace(namespace);
      if (!cluster) return done();
      let work = await d.store.get<Work>({ gk: WORK_GK, namespace, name: workName });
      if (!work) {
        d.seen.forget(key);
        return done();
      }
      if (work.metadata.deletionTimestamp) return reconcileDeletion(work, key, cluster);

      if (!(work.metadata.finalizers ?? []).includes(ExecutionControllerFinalizer)) {
        try {
          work = await d.store.update<Work>({ ...work, metadata: { ...work.metadata, finalizers: [...(work.metadata.finalizers ?? []), ExecutionControllerFinalizer] } });
        } catch (e) {
          if (isConflict(e)) throw new RetryableError("the Work changed while its finalizer was added; retrying");
          throw e;
        }
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

      const { statuses, errors, retry } = await applyAll(work, cluster, client, ctx.signal, current.manifestStatuses ?? []);
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
