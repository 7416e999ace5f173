import { BindingControllerFinalizer, ClusterPropagationPolicyPermanentIDLabel, GK, PropagationPolicyPermanentIDLabel, ResourceBindingPermanentIDLabel, isConflict, isNotFound, jsonClean, jsonEqual, parseKindKey, type KubeObject, type ResourceBinding, type KeyRef } from "@flotilla/api";
import { done, type ReconcileContext, type Reconciler } from "@flotilla/runtime";
import { bindingDependedByIndex } from "@flotilla/store";
import { bindingId, controllerRef, foreignOwner } from "../logic/binding.js";
import {
  BindingDependenciesAnnotation,
  DependenciesDistributorFinalizer,
  attachedBindingName,
  dependedByLabel,
  dependenciesOf,
  dependencyKey,
  inheritedPolicy,
  snapshotOf,
  withRequiredBy,
  type DependencyRef,
} from "../logic/dependencies.js";
import { labelEquals, templateRef, type ControllerDeps } from "./common.js";

export const dependenciesDistributorName = "dependencies-distributor";

const MAX_ATTEMPTS = 10;

type Deps = ControllerDeps;

/**
 * The dependencies distributor (Karmada's, for ResourceBindings; ClusterResourceBindings never
 * propagate dependencies). For a binding whose policy has `propagateDeps`:
 * - holds it with the finalizer `karmada.io/binding-dependencies-distributor` and records its
 *   dependencies (ConfigMaps, Secrets, ServiceAccount, PVCs of the pod template) in the
 *   annotation `resourcebinding.karmada.io/dependencies`;
 * - for each dependency that exists, creates or updates its attached binding
 *   (`<name>-<kind>` beside it, controlled by the dependency object, label
 *   `resourcebinding.karmada.io/depended-by-<hash>` = the binding's permanent id) with the
 *   binding's entry in `spec.requiredBy` carrying its clusters; the binding controller then
 *   writes the attached binding's Works to the union of its requiredBy clusters;
 * - releases the attached bindings of dependencies it no longer has.
 * Without `propagateDeps`, or once the binding is being deleted, it releases every attached
 * binding and drops its finalizer. A released attached binding that nobody requires any more
 * and that no policy of its own claims is deleted (its Works go with it).
 */
export function dependenciesDistributor(d: Deps): Reconciler<string> {
  return {
    name: dependenciesDistributorName,
    async reconcile(key, ctx) {
      const ref = parseKindKey(key);
      if (ref.gk !== GK.resourceBinding) return done();
      const b = await d.store.get<ResourceBinding>(ref);
      if (!b) {
        // normally the finalizer keeps a binding until it is released; this covers one removed without it
        await releaseAll(d, ref.namespace, ref.name, undefined, ctx);
        return done();
      }
      ctx.observed(b.metadata.resourceVersion);
      const held = (b.metadata.finalizers ?? []).includes(DependenciesDistributorFinalizer);
      if (!b.spec?.propagateDeps || b.metadata.deletionTimestamp) {
        if (!held) return done();
        await releaseAll(d, ref.namespace, ref.name, bindingId(b), ctx);
        const w = await d.store.mutate<ResourceBinding>(ref, (cur) =>
          (cur.metadata.finalizers ?? []).includes(DependenciesDistributorFinalizer)
            ? { ...cur, metadata: { ...cur.metadata, finalizers: (cur.metadata.finalizers ?? []).filter((f) => f !== DependenciesDistributorFinalizer) } }
            : undefined,
        );
        d.seen.dependencies.wrote(key, w?.metadata.resourceVersion);
        ctx.log.info({}, "attached bindings released; finalizer dropped");
        return done();
      }

      const t = await d.store.get(templateRef(b.spec.resource ?? {}));
      if (!t) return done(); // the template is gone; its deletion deletes the binding
      const deps = dependenciesOf(t);
      if (!deps) return done(); // no dependency interpreter for this kind

      const annotation = JSON.stringify(deps);
      let parent = b;
      if (!held || b.metadata.annotations?.[BindingDependenciesAnnotation] !== annotation) {
        const w = await d.store.mutate<ResourceBinding>(ref, (cur) => {
          if (cur.metadata.deletionTimestamp) return undefined;
          const fins = cur.metadata.finalizers ?? [];
          if (fins.includes(DependenciesDistributorFinalizer) && cur.metadata.annotations?.[BindingDependenciesAnnotation] === annotation) return undefined;
          return {
            ...cur,
            metadata: {
              ...cur.metadata,
              finalizers: fins.includes(DependenciesDistributorFinalizer) ? fins : [...fins, DependenciesDistributorFinalizer],
              annotations: { ...cur.metadata.annotations, [BindingDependenciesAnnotation]: annotation },
            },
          };
        });
        if (!w) return done();
        // deleted meanwhile: the retry releases instead
        if (w.metadata.deletionTimestamp || !(w.metadata.finalizers ?? []).includes(DependenciesDistributorFinalizer)) throw new Error("binding is being deleted");
        d.seen.dependencies.wrote(key, w.metadata.resourceVersion);
        parent = w;
      }

      const parentId = bindingId(parent) ?? "";
      const wanted = new Set(deps.map(dependencyKey));
      const attached = await listAttached(d, ref.namespace, ref.name, parentId);
      for (const a of attached) {
        if (!wanted.has(dependencyKey(a.spec?.resource ?? {}))) await detach(d, toAttachedRef(a), ref.namespace, ref.name, ctx);
      }
      for (const dep of deps) {
        const obj = await d.store.get(dependencyRef(dep));
        if (!obj) continue; // attached once it exists (its creation wakes this binding)
        await attach(d, obj, parent, ctx);
      }
      return done();
    },
  };
}

function dependencyRef(dep: DependencyRef): KeyRef {
  return { gk: `/${dep.kind}`, namespace: dep.namespace, name: dep.name };
}

function toAttachedRef(a: ResourceBinding): KeyRef {
  return { gk: GK.resourceBinding, namespace: a.metadata.namespace ?? "", name: a.metadata.name ?? "" };
}

/**
 * The attached bindings labelled for this binding: by its permanent id (the labels' index), or,
 * without one (the binding is gone), by the label's key alone (its index entry; an "Exists"
 * selector would read every binding of the namespace, and a template's wake-up can come for a
 * binding not made yet).
 */
async function listAttached(d: Deps, namespace: string, name: string, parentId: string | undefined): Promise<ResourceBinding[]> {
  const label = dependedByLabel(namespace, name);
  const by = parentId ? { labelSelector: labelEquals(label, parentId) } : { index: bindingDependedByIndex(label) };
  return (await d.store.list<ResourceBinding>(GK.resourceBinding, { namespace, ...by })).items;
}

async function releaseAll(d: Deps, namespace: string, name: string, parentId: string | undefined, ctx: ReconcileContext): Promise<void> {
  for (const a of await listAttached(d, namespace, name, parentId)) await detach(d, toAttachedRef(a), namespace, name, ctx);
}

const claimedByPolicy = (b: KubeObject) => !!(b.metadata.labels?.[PropagationPolicyPermanentIDLabel] || b.metadata.labels?.[ClusterPropagationPolicyPermanentIDLabel]);

/**
 * The conflictResolution / preserveResourcesOnDeletion of an attached binding without a
 * placement of its own: from every binding that requires it (`self` is the one at hand).
 */
async function withInheritedPolicy(d: Deps, a: ResourceBinding, self: ResourceBinding | undefined): Promise<ResourceBinding> {
  if (a.spec?.placement) return a;
  const parents = await Promise.all(
    (a.spec?.requiredBy ?? []).map(async (s) => {
      if (self && (s.namespace ?? "") === (self.metadata.namespace ?? "") && s.name === self.metadata.name) return self.spec;
      return (await d.store.get<ResourceBinding>({ gk: GK.resourceBinding, namespace: s.namespace ?? "", name: s.name ?? "" }))?.spec;
    }),
  );
  const p = inheritedPolicy(parents);
  const spec = { ...a.spec };
  if (p.conflictResolution) spec.conflictResolution = p.conflictResolution;
  else delete spec.conflictResolution;
  if (p.preserveResourcesOnDeletion !== undefined) spec.preserveResourcesOnDeletion = p.preserveResourcesOnDeletion;
  else delete spec.preserveResourcesOnDeletion;
  return { ...a, spec };
}

/** createOrUpdate of the dependency's attached binding with the parent's requiredBy entry (re-read and redone on conflict). */
async function attach(d: Deps, obj: KubeObject, parent: ResourceBinding, ctx: ReconcileContext): Promise<void> {
  const ns = parent.metadata.namespace ?? "";
  const pname = parent.metadata.name ?? "";
  const aref: KeyRef = { gk: GK.resourceBinding, namespace: obj.metadata.namespace ?? "", name: attachedBindingName({ kind: obj.kind, name: obj.metadata.name ?? "" }) };
  const entry = snapshotOf(ns, pname, parent.spec?.clusters);
  const label = { [dependedByLabel(ns, pname)]: bindingId(parent) ?? "" };
  const resource = { apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name, uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion };
  const { written } = await d.store.upsert<ResourceBinding>(aref, async (cur) => {
    if (!cur) {
      if (!entry.clusters?.length) return undefined; // nothing needs it anywhere yet
      const desired = await withInheritedPolicy(
        d,
        {
          apiVersion: "work.karmada.io/v1alpha2",
          kind: "ResourceBinding",
          metadata: {
            name: aref.name,
            namespace: aref.namespace,
            labels: { ...label, [ResourceBindingPermanentIDLabel]: d.uuid() },
            ownerReferences: [controllerRef(obj)],
            finalizers: [BindingControllerFinalizer],
          },
          spec: { resource, requiredBy: [entry] },
        },
        parent,
      );
      return jsonClean(desired);
    }
    if (cur.metadata.deletionTimestamp) throw new Error(`attached binding ${aref.namespace}/${aref.name} is being deleted; retrying once it is gone`);
    const foreign = foreignOwner(cur, obj);
    if (foreign) throw new Error(`attached binding ${aref.namespace}/${aref.name} is controlled by another object (uid ${foreign})`);
    const next = await withInheritedPolicy(
      d,
      {
        ...cur,
        metadata: { ...cur.metadata, labels: { ...cur.metadata.labels, ...label } },
        spec: { ...cur.spec, resource, requiredBy: withRequiredBy(cur.spec?.requiredBy, ns, pname, entry) },
      },
      parent,
    );
    const clean = jsonClean(next);
    return jsonEqual(clean, cur) ? undefined : clean;
  });
  if (written === "created") ctx.log.info({ attached: aref.name, clusters: entry.clusters?.map((c) => c.name) }, "created attached binding");
  else if (written) ctx.log.debug({ attached: aref.name }, "updated attached binding");
}

/**
 * Removes the parent's label and requiredBy entry from an attached binding; one that nobody
 * requires any more and that no policy claims is deleted instead (its Works go with it).
 */
async function detach(d: Deps, aref: KeyRef, namespace: string, name: string, ctx: ReconcileContext): Promise<void> {
  const label = dependedByLabel(namespace, name);
  let last: unknown;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const cur = await d.store.get<ResourceBinding>(aref);
    if (!cur) return;
    try {
      const requiredBy = withRequiredBy(cur.spec?.requiredBy, namespace, name, undefined);
      if (requiredBy.length === 0 && !claimedByPolicy(cur)) {
        if (cur.metadata.deletionTimestamp) return;
        await d.store.delete(aref, { resourceVersion: cur.metadata.resourceVersion });
        ctx.log.info({ attached: aref.name }, "deleted attached binding nothing requires any more");
        return;
      }
      const labels = { ...cur.metadata.labels };
      delete labels[label];
      const next = jsonClean(await withInheritedPolicy(d, { ...cur, metadata: { ...cur.metadata, labels }, spec: { ...cur.spec, requiredBy } }, undefined));
      if (jsonEqual(next, cur)) return;
      await d.store.update(next);
      ctx.log.info({ attached: aref.name }, "released attached binding");
      return;
    } catch (e) {
      if (isNotFound(e)) return;
      if (!isConflict(e)) throw e;
      last = e;
    }
  }
  throw last;
}
