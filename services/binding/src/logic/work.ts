import {
  AppliedClusterOverrides,
  AppliedOverrides,
  ClusterResourceBindingAnnotationKey,
  ExecutionControllerFinalizer,
  KARMADA,
  ManagedAnnotation,
  ManagedByKarmadaLabel,
  ManagedByKarmadaLabelValue,
  ManagedLabels,
  ResourceBindingNameAnnotationKey,
  ResourceBindingNamespaceAnnotationKey,
  ResourceConflictResolutionAbort,
  ResourceConflictResolutionAnnotation,
  ResourceConflictResolutionOverwrite,
  ResourceTemplateGenerationAnnotationKey,
  ResourceTemplateUIDAnnotation,
  WorkNameAnnotation,
  WorkNamespaceAnnotation,
  WorkPermanentIDLabel,
  apiVersionOf,
  executionNamespace,
  workName,
  jsonClean,
  type AnyResourceBinding,
  type KubeObject,
  type Placement,
  type ResourceBindingSpec,
  type TargetCluster,
  type Work,
} from "@flotilla/api";
import { allocateWebsterSeats, uidTieBreaker } from "@flotilla/scheduling";
import { bindingId, bindingIdLabel, isClusterBinding } from "./binding.js";
import { appliedOverridesAnnotation, applyOverrides, type ClusterOverrides } from "./overrides.js";
import { replicaField, templateGroupKind } from "./replicas.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** mergeTargetClusters: `spec.clusters`, then the clusters of `requiredBy` not already listed. */
export function targetClusters(spec: ResourceBindingSpec | undefined): TargetCluster[] {
  const out: TargetCluster[] = [...(spec?.clusters ?? [])];
  const seen = new Set(out.map((c) => c.name ?? ""));
  for (const snap of spec?.requiredBy ?? []) {
    for (const c of snap.clusters ?? []) {
      if (seen.has(c.name ?? "")) continue;
      seen.add(c.name ?? "");
      out.push(c);
    }
  }
  return out;
}

/** Placement.ReplicaSchedulingType(): no strategy means Duplicated; a strategy without a type is Divided (CRD default). */
export function replicaSchedulingType(p: Placement | undefined): "Duplicated" | "Divided" | string {
  const rs = p?.replicaScheduling;
  if (!rs) return "Duplicated";
  return rs.replicaSchedulingType || "Divided";
}

/**
 * A Job's `spec.completions` per cluster when the placement divides replicas: Webster over the
 * clusters' replica counts, ties broken by the template's UID. Undefined when not applicable
 * (not a Job, no completions set, not Divided, or a binding without replicas).
 */
export function jobCompletions(t: KubeObject, spec: ResourceBindingSpec | undefined, targets: readonly TargetCluster[]): Map<string, number> | undefined {
  if (templateGroupKind(t) !== "batch/Job") return undefined;
  if (!((spec?.replicas ?? 0) > 0) || replicaSchedulingType(spec?.placement) !== "Divided") return undefined;
  const completions = isObj(t.spec) ? t.spec.completions : undefined;
  if (typeof completions !== "number") return undefined;
  const seats = allocateWebsterSeats(
    completions,
    targets.map((c) => [c.name ?? "", c.replicas ?? 0] as const),
    undefined,
    uidTieBreaker(t.metadata.uid ?? ""),
  );
  return new Map(seats.map((s) => [s.name, s.seats]));
}

/**
 * injectReservedLabelState (gate StatefulFailoverInjection): the labels a failover preserved
 * from the cluster the workload left, for its copy on `cluster`, or undefined. As upstream,
 * only when the binding targets exactly one cluster (`targetCount`, spec.clusters plus the
 * requiredBy clusters), the last graceful-eviction task is Directly, and `cluster` is not one
 * the workload ran on before that failover; an empty state injects nothing. The labels are on
 * the copy while that task lasts (upstream the same).
 */
export function preservedLabelsFor(spec: ResourceBindingSpec | undefined, cluster: string, targetCount: number): Record<string, string> | undefined {
  if (targetCount > 1) return undefined;
  const tasks = spec?.gracefulEvictionTasks ?? [];
  const last = tasks[tasks.length - 1];
  if (!last || (last.purgeMode !== "Directly" && last.purgeMode !== "Immediately")) return undefined;
  if ((last.clustersBeforeFailover ?? []).includes(cluster)) return undefined;
  const state = last.preservedLabelState ?? {};
  return Object.keys(state).length ? { ...state } : undefined;
}

/** shouldSuspendDispatching: all dispatching suspended, or this cluster listed in dispatchingOnClusters. */
export function suspendDispatching(spec: ResourceBindingSpec | undefined, cluster: string): boolean {
  const s = spec?.suspension;
  if (!s) return false;
  if (s.dispatching) return true;
  return (s.dispatchingOnClusters?.clusterNames ?? []).includes(cluster);
}

/** mergeConflictResolution: the template's annotation (overwrite|abort) wins, then the binding's setting, else abort. */
export function conflictResolution(t: KubeObject, spec: ResourceBindingSpec | undefined): string {
  const fromTemplate = t.metadata.annotations?.[ResourceConflictResolutionAnnotation];
  if (fromTemplate === ResourceConflictResolutionOverwrite || fromTemplate === ResourceConflictResolutionAbort) return fromTemplate;
  return spec?.conflictResolution === "Overwrite" ? ResourceConflictResolutionOverwrite : ResourceConflictResolutionAbort;
}

/**
 * prune.RemoveIrrelevantFields (+ RemoveJobTTLSeconds): what the API server fills in and what
 * must not reach a member: server metadata, owner references, finalizers, status, a Service's
 * allocated clusterIP(s), a Job's generated selector and TTL, a ServiceAccount's token secrets.
 */
export function pruneManifest(m: Obj): void {
  const meta = isObj(m.metadata) ? m.metadata : {};
  for (const f of ["creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "managedFields", "resourceVersion", "selfLink", "uid", "ownerReferences", "finalizers"]) {
    delete meta[f];
  }
  delete m.status;
  const spec = isObj(m.spec) ? m.spec : undefined;
  const gk = templateGroupKind(m as unknown as KubeObject);
  if (gk === "/Service" && spec && "clusterIP" in spec && spec.clusterIP !== "None") {
    delete spec.clusterIP;
    delete spec.clusterIPs;
  }
  if (gk === "batch/Job" && spec) {
    if (spec.manualSelector !== true) {
      delete spec.selector;
      const tmeta = isObj(spec.template) && isObj(spec.template.metadata) ? spec.template.metadata : undefined;
      if (tmeta && isObj(tmeta.labels)) {
        const labels = tmeta.labels;
        delete labels["controller-uid"];
        delete labels["batch.kubernetes.io/controller-uid"];
        if (Object.keys(labels).length === 0) delete tmeta.labels;
      }
    }
    delete spec.ttlSecondsAfterFinished;
  }
  if (gk === "/ServiceAccount" && Array.isArray(m.secrets)) {
    const prefix = `${String(meta.name ?? "")}-token-`;
    m.secrets = m.secrets.filter((s) => !(isObj(s) && typeof s.name === "string" && s.name.startsWith(prefix)));
  }
}

function sortedKeys(o: Obj | undefined): string[] {
  return Object.keys(o ?? {}).sort();
}

export interface WorkInput {
  template: KubeObject;
  binding: AnyResourceBinding;
  target: TargetCluster;
  /** This cluster's share of a Job's completions (see jobCompletions). */
  completions?: number;
  /** The Work's permanent id: the stored one, or a new one for a Work about to be created. */
  workId: string;
  /** The override entries for this cluster (see overrideEntries); none when absent. */
  overrides?: ClusterOverrides;
  /** How many clusters the binding targets (spec.clusters plus requiredBy; see preservedLabelsFor); default 1. */
  targetCount?: number;
}

/** The Work's identity for a template on a cluster. */
export function workRefFor(t: Pick<KubeObject, "kind" | "metadata">, cluster: string): { namespace: string; name: string } {
  return { namespace: executionNamespace(cluster), name: workName(t.metadata.namespace ?? "", t.metadata.name ?? "", t.kind) };
}

/**
 * ensureWork + CreateOrUpdateWork for one target cluster: the template with that cluster's
 * replica count (for every kind with a ReviseReplica hook, Divided or Duplicated alike, once
 * the binding has replicas), a Job's share of completions, then the cluster's overrides
 * (ClusterOverridePolicies, then OverridePolicies; recorded in the Work's applied-overrides
 * annotations), the labels and annotations that link manifest and Work back to the binding,
 * the conflict resolution, and the dispatching and deletion settings. An override that cannot
 * apply throws an OverrideError. After the overrides, the labels a failover preserved for this
 * cluster (preservedLabelsFor).
 */
export function buildWork(i: WorkInput): Work {
  const { template: t, binding: b, target } = i;
  const spec = b.spec;
  const cluster = target.name ?? "";
  const ref = workRefFor(t, cluster);
  let m = structuredClone(t) as unknown as Obj;
  const mspec = isObj(m.spec) ? m.spec : undefined;

  const field = replicaField(t);
  if ((spec?.replicas ?? 0) > 0 && field && mspec) mspec[field] = target.replicas ?? 0;
  if (i.completions !== undefined && mspec && typeof mspec.completions === "number") mspec.completions = i.completions;
  if (i.overrides) m = applyOverrides(m, i.overrides);
  const meta = (isObj(m.metadata) ? m.metadata : (m.metadata = {})) as Obj & { labels?: Record<string, string>; annotations?: Record<string, string> };
  const preserved = preservedLabelsFor(spec, cluster, i.targetCount ?? 1);
  if (preserved) meta.labels = { ...meta.labels, ...preserved };

  const idLabel = bindingIdLabel(b);
  const id = bindingId(b) ?? "";
  const workLabels: Record<string, string> = { [idLabel]: id };
  const workAnnotations: Record<string, string> = isClusterBinding(b)
    ? { [ClusterResourceBindingAnnotationKey]: b.metadata.name ?? "" }
    : { [ResourceBindingNamespaceAnnotationKey]: b.metadata.namespace ?? "", [ResourceBindingNameAnnotationKey]: b.metadata.name ?? "" };
  workAnnotations[ResourceConflictResolutionAnnotation] = conflictResolution(t, spec);

  const labels: Record<string, string> = { ...meta.labels, [idLabel]: id, [ManagedByKarmadaLabel]: ManagedByKarmadaLabelValue, [WorkPermanentIDLabel]: i.workId };
  const annotations: Record<string, string> = { ...meta.annotations };
  if ((t.metadata.generation ?? 0) > 0) annotations[ResourceTemplateGenerationAnnotationKey] = String(t.metadata.generation);
  Object.assign(annotations, workAnnotations, {
    [ResourceTemplateUIDAnnotation]: t.metadata.uid ?? "",
    [WorkNameAnnotation]: ref.name,
    [WorkNamespaceAnnotation]: ref.namespace,
  });
  // RecordManagedAnnotations, then RecordManagedLabels
  annotations[ManagedAnnotation] = [...sortedKeys(annotations).filter((k) => k !== ManagedAnnotation && k !== ManagedLabels), ManagedAnnotation].sort().join(",");
  annotations[ManagedLabels] = sortedKeys(labels).join(",");
  meta.labels = labels;
  meta.annotations = annotations;
  pruneManifest(m);
  // RecordAppliedOverrides: on the Work only, not the manifest
  const cops = appliedOverridesAnnotation(i.overrides?.cluster ?? []);
  const ops = appliedOverridesAnnotation(i.overrides?.namespaced ?? []);
  if (cops) workAnnotations[AppliedClusterOverrides] = cops;
  if (ops) workAnnotations[AppliedOverrides] = ops;

  return jsonClean({
    apiVersion: apiVersionOf(KARMADA.work),
    kind: KARMADA.work.kind,
    metadata: {
      name: ref.name,
      namespace: ref.namespace,
      labels: { ...workLabels, [WorkPermanentIDLabel]: i.workId },
      annotations: workAnnotations,
      finalizers: [ExecutionControllerFinalizer],
    },
    spec: {
      workload: { manifests: [m as never] },
      suspendDispatching: suspendDispatching(spec, cluster),
      preserveResourcesOnDeletion: spec?.preserveResourcesOnDeletion ?? false,
    },
  });
}

/**
 * CreateOrUpdateWork's mutation: onto the stored Work, merge labels and annotations (ours win)
 * and finalizers, and replace the spec. Without a stored Work, the desired one.
 */
export function mergeWork(existing: Work | undefined, desired: Work): Work {
  if (!existing) return desired;
  return {
    ...existing,
    metadata: {
      ...existing.metadata,
      labels: { ...existing.metadata.labels, ...desired.metadata.labels },
      annotations: { ...existing.metadata.annotations, ...desired.metadata.annotations },
      finalizers: [...new Set([...(existing.metadata.finalizers ?? []), ...(desired.metadata.finalizers ?? [])])],
    },
    spec: desired.spec,
  };
}
