import { GK, WorkPermanentIDLabel, jsonClean, jsonEqual, kindKey, parseKindKey, type AnyResourceBinding, type KubeObject, type ResourceBindingStatus, type TargetCluster, type Work, type KeyRef } from "@flotilla/api";
import { after, done, terminal, type ReconcileContext, type Reconciler } from "@flotilla/runtime";
import { bindingFinalizer, bindingId, bindingIdLabel } from "../logic/binding.js";
import { orphanWorks, worksBlockingDirectPurge } from "../logic/orphans.js";
import { OverrideError, type ClusterOverrides } from "../logic/overrides.js";
import { EventReasonApplyOverridePolicyFailed, EventReasonSyncWorkFailed, OverridePolicyFailedReason, cutMessage, templateProblem, withStalled, withoutStalled } from "../logic/stalled.js";
import { bindingStatusUpdate, templateStatusUpdate } from "../logic/status.js";
import { buildWork, jobCompletions, mergeWork, targetClusters, workRefFor } from "../logic/work.js";
import { deleteIfPresent, labelEquals, templateRef, toRef, writeStatus, type ControllerDeps } from "./common.js";
import { clusterOverrides } from "./overrides.js";

export const bindingControllerName = "binding-controller";


/**
 * The binding controller, for ResourceBindings and ClusterResourceBindings alike:
 * - deleted: delete the binding's Works, then release its finalizer;
 * - otherwise: delete orphan Works (clusters neither scheduled, required by a dependant, nor
 *   held by a non-Directly eviction task), wait while a Directly-purged cluster still has its
 *   Work, then write one Work per target cluster carrying the template with that cluster's
 *   replicas; finally aggregate the Works' status into the binding and the template.
 * A template whose fields cannot be read fails terminally: its Works stay as they are, the
 * binding gets the `Stalled` condition and both a `SyncWorkFailed` Event (see logic/stalled.ts),
 * and the binding is looked at again when it, its template or its Works change.
 * Each Work's manifest carries the cluster's overrides (ClusterOverridePolicies, then
 * OverridePolicies). A cluster whose overrides cannot apply, or make a manifest the gateway
 * would refuse as a template (logic/overrides.ts, applyOverrides), keeps its Work as it was (the
 * others are written); the binding gets `Stalled` (reason ApplyOverridePolicyFailed) and the
 * Events, and fails terminally until the policy, the template or the binding changes.
 */
export function bindingController(d: ControllerDeps): Reconciler<string> {
  return {
    name: bindingControllerName,
    async reconcile(key, ctx) {
      const ref = parseKindKey(key);
      const b = await d.store.get<AnyResourceBinding>(ref);
      if (!b) return done();
      ctx.observed(b.metadata.resourceVersion);
      const id = bindingId(b);
      const listWorks = async () => (id ? (await d.store.list<Work>(GK.work, { labelSelector: labelEquals(bindingIdLabel(b), id) })).items : []);

      if (b.metadata.deletionTimestamp) {
        const works = await listWorks();
        await Promise.all(
          works.filter((w) => !w.metadata.deletionTimestamp).map(async (w) => d.seen.binding.wrote(kindKey(toRef(w)), (await deleteIfPresent(d.store, toRef(w)))?.metadata.resourceVersion)),
        );
        const fin = bindingFinalizer(b);
        await d.store.mutate<AnyResourceBinding>(ref, (cur) =>
          (cur.metadata.finalizers ?? []).includes(fin) ? { ...cur, metadata: { ...cur.metadata, finalizers: (cur.metadata.finalizers ?? []).filter((f) => f !== fin) } } : undefined,
        );
        ctx.log.info({ works: works.length }, "binding deleted; works deleted and finalizer released");
        return done();
      }
      if (!id) {
        ctx.log.warn({}, "binding has no permanent id; its Works cannot be tracked");
        return done();
      }
      // a binding as the detector created it, never scheduled: no Work can exist yet
      if (b.metadata.generation === 1 && targetClusters(b.spec).length === 0 && !b.spec?.gracefulEvictionTasks?.length && !b.status?.lastScheduledTime) return done();
      const works = await listWorks();

      const orphans = orphanWorks(works, b.spec, b.status);
      await Promise.all(orphans.map(async (w) => d.seen.binding.wrote(kindKey(toRef(w)), (await deleteIfPresent(d.store, toRef(w)))?.metadata.resourceVersion)));
      if (orphans.length) ctx.log.info({ clusters: orphans.map((w) => w.metadata.namespace) }, "deleted orphan works");
      const orphaned = new Set(orphans.map((w) => w.metadata.namespace));
      if (worksBlockingDirectPurge(works, b.spec, b.status).length > 0) {
        ctx.log.debug({}, "works on Directly-purged clusters not deleted yet; sync deferred");
        return after(d.settings.directlyPurgeRequeueMs);
      }

      const t = await d.store.get(templateRef(b.spec?.resource ?? {}));
      if (!t) return done(); // the template is gone; its deletion deletes the binding
      const problem = templateProblem(t);
      if (problem) return stalled(d, ref, b, t, problem, ctx);

      const targets = targetClusters(b.spec);
      const completions = jobCompletions(t, b.spec, targets);
      const policies = await d.overridePolicies.for(t);
      const overrides = await clusterOverrides(d.store, policies, targets.map((c) => c.name ?? ""));
      const byNamespace = new Map(works.map((w) => [w.metadata.namespace ?? "", w]));
      const failures: string[] = [];
      const written = await Promise.all(
        targets.map(async (target) => {
          const w = workRefFor(t, target.name ?? "");
          const found = byNamespace.get(w.namespace);
          const existing = found?.metadata.name === w.name ? found : undefined;
          const o = overrides.get(target.name ?? "");
          try {
            if (o instanceof OverrideError) throw o;
            return await ensureWork(d, t, b, target, completions?.get(target.name ?? ""), existing, o, targets.length, ctx);
          } catch (e) {
            if (!(e instanceof OverrideError)) throw e;
            failures.push(`cluster(${target.name ?? ""}): ${e.message}`);
            return existing;
          }
        }),
      );
      const overrideProblem = failures.length ? `failed to apply overrides to ${t.kind} ${t.metadata.namespace ? `${t.metadata.namespace}/` : ""}${t.metadata.name ?? ""}: ${failures.sort().join("; ")}` : undefined;
      // a target's Work still being deleted (e.g. the cluster was dropped and is back): recreate it once gone
      const waitForDeletion = written.some((w) => w?.metadata.deletionTimestamp);
      if (waitForDeletion) ctx.log.debug({}, "a target cluster's work is still being deleted; will recreate it");

      // every Work of the binding as it is now, for the status
      const current = new Map<string, Work>();
      for (const w of works) current.set(w.metadata.namespace ?? "", orphaned.has(w.metadata.namespace) ? { ...w, metadata: { ...w.metadata, deletionTimestamp: w.metadata.deletionTimestamp ?? "deleting" } } : w);
      for (const w of written) if (w) current.set(w.metadata.namespace ?? "", w);
      const status = await syncStatus(d, ref, b, t, [...current.values()], overrideProblem);
      ctx.observed(status);
      if (overrideProblem) {
        const message = cutMessage(overrideProblem);
        await Promise.all([d.events.binding.warning(b, EventReasonSyncWorkFailed, message), d.events.binding.warning(t, EventReasonApplyOverridePolicyFailed, message)]);
        ctx.log.info({ failures: failures.length }, "overrides cannot apply; those clusters' works kept as they were");
        return terminal(new OverrideError(overrideProblem));
      }
      return waitForDeletion ? after(d.settings.workDeletingRequeueMs) : done();
    },
  };
}

/** CreateOrUpdateWork with the resourceVersion read, re-reading on conflict. */
async function ensureWork(
  d: ControllerDeps,
  t: KubeObject,
  b: AnyResourceBinding,
  target: TargetCluster,
  completions: number | undefined,
  known: Work | undefined,
  overrides: ClusterOverrides | undefined,
  targetCount: number,
  ctx: ReconcileContext,
): Promise<Work | undefined> {
  const ref = { gk: GK.work, ...workRefFor(t, target.name ?? "") };
  const { obj, written } = await d.store.upsert<Work>(
    ref,
    (existing) => {
      if (existing?.metadata.deletionTimestamp) return undefined;
      const desired = buildWork({ template: t, binding: b, target, completions, overrides, targetCount, workId: existing?.metadata.labels?.[WorkPermanentIDLabel] || d.uuid() });
      const next = jsonClean(mergeWork(existing, desired));
      return existing && jsonEqual(next, existing) ? undefined : next;
    },
    { first: known ?? null },
  );
  if (written && obj) {
    d.seen.binding.wrote(kindKey(ref), obj.metadata.resourceVersion);
    if (written === "created") ctx.log.debug({ work: ref }, "created work");
  }
  return obj;
}

/**
 * The binding's template cannot be read: record it on the binding (condition, Event) and on the
 * template (Event), and fail terminally, leaving the Works as they are.
 */
async function stalled(d: ControllerDeps, ref: KeyRef, b: AnyResourceBinding, t: KubeObject, problem: Error, ctx: ReconcileContext): Promise<never> {
  const now = d.now();
  const message = cutMessage(problem.message);
  const next = withStalled(b.status, message, now);
  if (next) {
    const written = await writeStatus(d.store, ref, { ...b, status: next }, (cur) => {
      const s = withStalled(cur.status, message, now);
      return s ? { ...cur, status: s } : undefined;
    });
    d.seen.binding.wrote(kindKey(ref), written?.metadata.resourceVersion);
    ctx.observed(written?.metadata.resourceVersion);
  }
  await Promise.all([d.events.binding.warning(b, EventReasonSyncWorkFailed, message), d.events.binding.warning(t, EventReasonSyncWorkFailed, message)]);
  return terminal(problem);
}

/**
 * The binding's aggregatedStatus + FullyApplied (and no `Stalled` condition: its template could
 * be read; or, with `overrideProblem`, `Stalled` saying which overrides cannot apply), then the
 * template's status; each written only when it changes, first with the resourceVersion read,
 * then re-read and recomputed on conflict. Returns the binding's resourceVersion after it.
 */
async function syncStatus(d: ControllerDeps, ref: KeyRef, b: AnyResourceBinding, t: KubeObject, works: Work[], overrideProblem?: string): Promise<string | undefined> {
  const now = d.now();
  const update = (cur: AnyResourceBinding): ResourceBindingStatus | undefined => {
    const base = overrideProblem ? withStalled(cur.status, cutMessage(overrideProblem), now, OverridePolicyFailedReason) : withoutStalled(cur.status);
    return bindingStatusUpdate(base ? { ...cur, status: base } : cur, works, now) ?? base;
  };
  let rv = b.metadata.resourceVersion;
  let status: ResourceBindingStatus | undefined = b.status;
  const next = update(b);
  if (next) {
    const written = await writeStatus(d.store, ref, { ...b, status: next }, (cur) => {
      const s = update(cur);
      return s ? { ...cur, status: s } : undefined;
    });
    d.seen.binding.wrote(kindKey(ref), written?.metadata.resourceVersion);
    status = written?.status;
    rv = written?.metadata.resourceVersion ?? rv;
  }
  if (!status?.lastScheduledTime) return rv;
  const items = status?.aggregatedStatus ?? [];
  const tnext = templateStatusUpdate(t, items, now);
  if (tnext) {
    const tref = toRef(t);
    const written = await writeStatus(d.store, tref, { ...t, status: tnext }, (cur) => {
      if (cur.metadata.uid !== t.metadata.uid) return undefined;
      const s = templateStatusUpdate(cur, items, now);
      return s ? { ...cur, status: s } : undefined;
    });
    // the template's status is news to neither the detector nor this controller
    d.seen.detector.wrote(kindKey(tref), written?.metadata.resourceVersion);
    d.seen.binding.wrote(kindKey(tref), written?.metadata.resourceVersion);
  }
  return rv;
}
