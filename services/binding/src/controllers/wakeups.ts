import { ClusterResourceBindingAnnotationKey, GK, ResourceBindingNameAnnotationKey, ResourceBindingNamespaceAnnotationKey, groupKind, isTemplateType, kindKey, resourceByKind, type WakeUp, type Work } from "@flotilla/api";
import { bindingOfWorkIndex, type ObjectStore } from "@flotilla/store";
import { bindingRefFor } from "../logic/binding.js";
import { isIgnoredNamespace } from "../logic/namespaces.js";
import type { SeenVersions } from "@flotilla/runtime";
import type { PolicyCache } from "./caches.js";
import { INTERPRETED_KINDS } from "../logic/dependencies.js";
import { bindingsForDependency, bindingsForOverridePolicy } from "./relations.js";

/** The keys one wake-up concerns, per controller. */
export interface Routed {
  detector: string[];
  policy: string[];
  binding: string[];
  /** Bindings whose dependencies to distribute again. */
  dependencies: string[];
  /** The key of the wake-up's own object (a template, policy or binding), when it has one. */
  own?: string;
}

/**
 * Maps a wake-up (from the single consumer on `<prefix>.obj.>`) to controller keys:
 * - a template (any kind `isTemplateType` holds for): the detector, and the binding
 *   controller for its binding (Works carry the template, and its status comes back to it);
 * - a (Cluster)PropagationPolicy: the policy controller;
 * - a (Cluster)OverridePolicy: the binding controller for the bindings whose template it may
 *   select and those whose Works were rendered with it (see bindingsForOverridePolicy: from the
 *   store, so on any replica);
 * - a (Cluster)ResourceBinding: the binding controller (a ResourceBinding also the dependencies
 *   distributor);
 * - a ConfigMap, Secret, ServiceAccount or PVC some binding depends on (its dependencies
 *   annotation lists it; see bindingsForDependency: from the store, so on any replica): also the
 *   distributor for those bindings;
 * - a workload the dependency interpreter knows: also the distributor for its binding;
 * - a Work: the binding controller for the binding named in its annotations (read from the
 *   store; a Work already gone needs nothing: its binding saw it being deleted);
 * - anything else (Clusters, Events, ...): nothing.
 * A wake-up about a version a controller wrote or already reconciled is not routed to it
 * (see SeenVersions); a policy wake-up drops the cached policy list of its scope.
 */
export async function routeWakeUp(
  w: WakeUp,
  d: {
    store: ObjectStore;
    skipped: readonly RegExp[];
    seen: { detector: SeenVersions; binding: SeenVersions; dependencies: SeenVersions };
    policies: PolicyCache;
  },
): Promise<Routed> {
  const out: Routed = { detector: [], policy: [], binding: [], dependencies: [] };
  const type = resourceByKind(w.apiVersion ?? "", w.kind ?? "");
  if (!type) return out;
  const gk = groupKind(type);
  const namespace = w.namespace ?? "";
  const name = w.name ?? "";
  switch (gk) {
    case GK.propagationPolicy:
    case GK.clusterPropagationPolicy:
      d.policies.invalidate(gk, namespace, w.resourceVersion);
      out.own = kindKey({ gk, namespace, name });
      out.policy.push(out.own);
      return out;
    case GK.overridePolicy:
    case GK.clusterOverridePolicy:
      out.binding.push(...(await bindingsForOverridePolicy(d.store, gk, namespace, name)));
      return out;
    case GK.resourceBinding:
    case GK.clusterResourceBinding: {
      const key = kindKey({ gk, namespace, name });
      out.own = key;
      if (!d.seen.binding.covers(key, w.resourceVersion)) out.binding.push(key);
      if (gk === GK.resourceBinding && !d.seen.dependencies.covers(key, w.resourceVersion)) out.dependencies.push(key);
      return out;
    }
    case GK.work: {
      if (d.seen.binding.covers(kindKey({ gk, namespace, name }), w.resourceVersion)) return out;
      // the Work's index hint names its binding; without one (an older write), read the Work
      const owner = (w.indexKeys ?? []).map(bindingOfWorkIndex).find((b) => b);
      if (owner) {
        out.binding.push(kindKey({ gk: owner.namespace ? GK.resourceBinding : GK.clusterResourceBinding, ...owner }));
        return out;
      }
      const work = await d.store.get<Work>({ gk, namespace, name });
      const a = work?.metadata.annotations ?? {};
      if (a[ResourceBindingNamespaceAnnotationKey] && a[ResourceBindingNameAnnotationKey]) {
        out.binding.push(kindKey({ gk: GK.resourceBinding, namespace: a[ResourceBindingNamespaceAnnotationKey], name: a[ResourceBindingNameAnnotationKey] }));
      } else if (a[ClusterResourceBindingAnnotationKey]) {
        out.binding.push(kindKey({ gk: GK.clusterResourceBinding, namespace: "", name: a[ClusterResourceBindingAnnotationKey] }));
      }
      return out;
    }
  }
  if (!isTemplateType(type) || isIgnoredNamespace(namespace, d.skipped)) return out;
  // a dependency created, changed or deleted: the bindings that depend on it
  if (type.group === "") out.dependencies.push(...(await bindingsForDependency(d.store, { apiVersion: w.apiVersion ?? "", kind: type.kind, namespace, name })));
  const key = kindKey({ gk, namespace, name });
  out.own = key;
  if (!d.seen.detector.covers(key, w.resourceVersion)) out.detector.push(key);
  const bkey = kindKey(bindingRefFor({ kind: type.kind, metadata: { namespace, name } }));
  if (!d.seen.binding.covers(key, w.resourceVersion)) out.binding.push(bkey);
  // a workload's pod template may name other dependencies now (its binding is rewritten only when its replicas change)
  if (namespace && INTERPRETED_KINDS.has(gk)) out.dependencies.push(bkey);
  return out;
}
