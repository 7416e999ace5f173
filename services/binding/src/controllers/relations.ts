import {
  ClusterResourceBindingAnnotationKey,
  GK,
  ResourceBindingNameAnnotationKey,
  ResourceBindingNamespaceAnnotationKey,
  kindKey,
  type AnyOverridePolicy,
  type AnyResourceBinding,
  type ResourceSelector,
  type Work,
} from "@flotilla/api";
import { bindingDependencyIndex, workAppliedOverrideIndex, type ObjectStore } from "@flotilla/store";
import { DEPENDENCY_KINDS } from "../logic/dependencies.js";
import { OverridePolicyFailedReason, Stalled } from "../logic/stalled.js";

// Which bindings a change of a dependency or of an override policy concerns, read from the store
// (the secondary index its indexers keep on the objects that record the relation, as Karmada
// records it), so that any replica receiving the wake-up finds them, whichever replica rendered
// the binding. Objects written before the index existed get their entries when next rewritten;
// until then the periodic resync (`RESYNC_PERIOD`) is what reaches them.

const DEPENDENCY_KIND_SET: ReadonlySet<string> = new Set(DEPENDENCY_KINDS);

/**
 * The ResourceBindings whose `resourcebinding.karmada.io/dependencies` annotation lists a core
 * object (the distributor writes it before it reads the dependencies, so a dependency created
 * after that finds the binding here): one indexed list, and only for the kinds a dependency can
 * be (ConfigMap, Secret, ServiceAccount, PersistentVolumeClaim); none for any other object.
 */
export async function bindingsForDependency(store: ObjectStore, o: { apiVersion: string; kind: string; namespace: string; name: string }): Promise<string[]> {
  if (o.apiVersion !== "v1" || !DEPENDENCY_KIND_SET.has(o.kind) || !o.namespace) return [];
  const { items } = await store.list<AnyResourceBinding>(GK.resourceBinding, { namespace: o.namespace, index: bindingDependencyIndex(o) });
  return items.map((b) => kindKey({ gk: GK.resourceBinding, namespace: b.metadata.namespace ?? "", name: b.metadata.name ?? "" }));
}

/** The binding a Work belongs to (its annotations), as a binding controller key. */
export function bindingKeyOfWork(w: Pick<Work, "metadata">): string | undefined {
  const a = w.metadata.annotations ?? {};
  if (a[ResourceBindingNamespaceAnnotationKey] && a[ResourceBindingNameAnnotationKey]) {
    return kindKey({ gk: GK.resourceBinding, namespace: a[ResourceBindingNamespaceAnnotationKey], name: a[ResourceBindingNameAnnotationKey] });
  }
  if (a[ClusterResourceBindingAnnotationKey]) return kindKey({ gk: GK.clusterResourceBinding, namespace: "", name: a[ClusterResourceBindingAnnotationKey] });
  return undefined;
}

/** A selector that could pick the binding's template, ignoring its label selector (the template is not read here). */
function mayPick(rs: ResourceSelector, r: NonNullable<AnyResourceBinding["spec"]>["resource"]): boolean {
  if ((rs.apiVersion ?? "") !== (r?.apiVersion ?? "") || (rs.kind ?? "") !== (r?.kind ?? "")) return false;
  if (rs.namespace && rs.namespace !== (r?.namespace ?? "")) return false;
  return !rs.name || rs.name === r?.name;
}

/** Whether the binding is parked because overrides could not apply (its Works may predate any record of the policy). */
function stalledByOverrides(b: AnyResourceBinding): boolean {
  const conditions = (b.status as { conditions?: { type?: string; reason?: string }[] } | undefined)?.conditions ?? [];
  return conditions.some((c) => c.type === Stalled && c.reason === OverridePolicyFailedReason);
}

/**
 * The bindings an override policy's change concerns:
 * - those whose Works were rendered with it (their `policy.karmada.io/applied-overrides` /
 *   `applied-cluster-overrides` annotations name it: one indexed list of Works), so a policy
 *   whose selectors stop naming a template, or that goes, re-renders it on whichever replica;
 * - those in its scope (an OverridePolicy's namespace; every RB and CRB for a
 *   ClusterOverridePolicy) whose template its selectors may pick now (all of them when it has
 *   none), and those parked because overrides could not apply;
 * - a policy that is gone (its selectors unknown): every binding in its scope.
 */
export async function bindingsForOverridePolicy(store: ObjectStore, gk: string, namespace: string, name: string): Promise<string[]> {
  const index = workAppliedOverrideIndex(gk === GK.overridePolicy ? { namespace, name } : { name });
  const [rendered, p] = await Promise.all([store.list<Work>(GK.work, { index }), store.get<AnyOverridePolicy>({ gk, namespace, name })]);
  const keys = new Set<string>();
  for (const w of rendered.items) {
    const k = bindingKeyOfWork(w);
    if (k) keys.add(k);
  }
  const selectors = p?.spec?.resourceSelectors ?? [];
  const lists =
    gk === GK.overridePolicy
      ? [{ gk: GK.resourceBinding, items: (await store.list<AnyResourceBinding>(GK.resourceBinding, { namespace })).items }]
      : [
          { gk: GK.resourceBinding, items: (await store.list<AnyResourceBinding>(GK.resourceBinding)).items },
          { gk: GK.clusterResourceBinding, items: (await store.list<AnyResourceBinding>(GK.clusterResourceBinding)).items },
        ];
  for (const l of lists) {
    for (const b of l.items) {
      if (!p || selectors.length === 0 || selectors.some((rs) => mayPick(rs, b.spec?.resource)) || stalledByOverrides(b)) {
        keys.add(kindKey({ gk: l.gk, namespace: b.metadata.namespace ?? "", name: b.metadata.name ?? "" }));
      }
    }
  }
  return [...keys];
}
