import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import {
  ManagedAnnotation,
  ManagedByKarmadaLabel,
  ManagedByKarmadaLabelValue,
  ManagedLabels,
  ResourceConflictResolutionAnnotation,
  ResourceConflictResolutionOverwrite,
  WorkNameAnnotation,
  WorkNamespaceAnnotation,
  WorkPermanentIDLabel,
  parseApiVersion,
  type Condition,
  type KubeObject,
  type Work,
} from "@flotilla/api";
import type { Health } from "./health.js";

export const WorkApplied = "Applied";
export const WorkDispatching = "Dispatching";

export const AppliedReasons = { success: "AppliedSuccessful", failed: "AppliedFailed" } as const;
export const DispatchingReasons = { suspended: "SuspendDispatching", dispatching: "Dispatching" } as const;

type Obj = Record<string, unknown>;

/** ResourceIdentifier of a manifestStatus. */
export interface ResourceIdentifier {
  ordinal: number;
  group: string;
  version: string;
  kind: string;
  resource: string;
  namespace: string;
  name: string;
}

export interface ManifestStatus {
  identifier: ResourceIdentifier;
  status?: Record<string, unknown>;
  health: Health;
}

export interface WorkStatusJson {
  conditions?: Condition[];
  manifestStatuses?: ManifestStatus[];
}

export function manifestsOf(work: Work): KubeObject[] {
  const ms = (work.spec as { workload?: { manifests?: unknown[] } } | undefined)?.workload?.manifests ?? [];
  return ms.filter((m): m is KubeObject => typeof m === "object" && m !== null && typeof (m as Obj).kind === "string") as KubeObject[];
}

export function isSuspended(work: Work): boolean {
  return (work.spec as { suspendDispatching?: boolean } | undefined)?.suspendDispatching === true;
}

export function preservesOnDeletion(work: Work): boolean {
  return (work.spec as { preserveResourcesOnDeletion?: boolean } | undefined)?.preserveResourcesOnDeletion === true;
}

/**
 * The object to put on the member for one manifest: the manifest with the managed label
 * (`karmada.io/managed=true`), the Work's permanent id, and annotations naming the Work (so a
 * member event finds its Work). Server-owned metadata and status are dropped.
 */
export function desiredObject(work: Work, manifest: KubeObject): KubeObject {
  const o = structuredClone(manifest) as KubeObject;
  const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, generation: _g, managedFields: _mf, selfLink: _sl, ownerReferences: _or, finalizers: _f, deletionTimestamp: _dt, ...meta } =
    (o.metadata ?? {}) as Record<string, unknown>;
  const labels: Record<string, string> = { ...((meta.labels as Record<string, string>) ?? {}), [ManagedByKarmadaLabel]: ManagedByKarmadaLabelValue };
  const pid = work.metadata.labels?.[WorkPermanentIDLabel];
  if (pid) labels[WorkPermanentIDLabel] = pid;
  const annotations: Record<string, string> = {
    ...((meta.annotations as Record<string, string>) ?? {}),
    [WorkNamespaceAnnotation]: work.metadata.namespace ?? "",
    [WorkNameAnnotation]: work.metadata.name ?? "",
  };
  o.metadata = { ...(meta as KubeObject["metadata"]), labels, annotations };
  delete o.status;
  return o;
}

/** The Work (namespace/name) a member object belongs to, from the annotations put there on apply. */
export function workKeyOf(memberObj: KubeObject): string | undefined {
  const a = memberObj.metadata.annotations ?? {};
  const ns = a[WorkNamespaceAnnotation];
  const name = a[WorkNameAnnotation];
  return ns && name ? `${ns}/${name}` : undefined;
}

/** conflictResolution: the manifest's annotation (set from the template or the policy), else the Work's, else abort. */
export function overwrites(work: Work, manifest: KubeObject): boolean {
  const v = manifest.metadata?.annotations?.[ResourceConflictResolutionAnnotation] ?? work.metadata.annotations?.[ResourceConflictResolutionAnnotation];
  return v === ResourceConflictResolutionOverwrite;
}

export function isManaged(memberObj: KubeObject): boolean {
  return memberObj.metadata.labels?.[ManagedByKarmadaLabel] === ManagedByKarmadaLabelValue;
}

/**
 * Whether an existing member object may be updated: it is managed by Karmada, or the desired
 * object asks to overwrite. Otherwise the message the Applied condition carries (Abort).
 */
export function updateVerdict(memberObj: KubeObject, overwrite: boolean, cluster: string): true | string {
  if (isManaged(memberObj) || overwrite) return true;
  // upstream's text (objectwatcher), "<namespace>/<name>" with an empty namespace for a cluster-scoped object
  return `resource(kind=${memberObj.kind}, ${memberObj.metadata.namespace ?? ""}/${memberObj.metadata.name ?? ""}) already exists in the cluster ${cluster} and the ${ResourceConflictResolutionAnnotation} strategy value is empty, Karmada will not manage this resource`;
}

export function identifierOf(ordinal: number, obj: KubeObject, resource: string): ResourceIdentifier {
  const { group, version } = parseApiVersion(obj.apiVersion);
  return { ordinal, group, version, kind: obj.kind, resource, namespace: obj.metadata.namespace ?? "", name: obj.metadata.name ?? "" };
}

/** The Applied condition: True/AppliedSuccessful, or False/AppliedFailed "Failed to apply all manifests (ok/total): …". */
export function appliedCondition(total: number, errors: string[], generation: number | undefined): Omit<Condition, "lastTransitionTime"> {
  if (errors.length === 0) {
    return { type: WorkApplied, status: "True", reason: AppliedReasons.success, message: "Manifest has been successfully applied", observedGeneration: generation };
  }
  const agg = errors.length === 1 ? errors[0]! : `[${errors.join(", ")}]`;
  return { type: WorkApplied, status: "False", reason: AppliedReasons.failed, message: `Failed to apply all manifests (${total - errors.length}/${total}): ${agg}`, observedGeneration: generation };
}

export function dispatchingCondition(suspended: boolean, generation: number | undefined): Omit<Condition, "lastTransitionTime"> {
  return suspended
    ? { type: WorkDispatching, status: "False", reason: DispatchingReasons.suspended, message: "Work dispatching is in a suspended state.", observedGeneration: generation }
    : { type: WorkDispatching, status: "True", reason: DispatchingReasons.dispatching, message: "Work is being dispatched to member clusters.", observedGeneration: generation };
}

/** Karmada's ObjectVersion: "gen:<generation>" when the object has one, else "rv:<resourceVersion>". */
export function objectVersion(o: KubeObject): string {
  const g = o.metadata.generation;
  return typeof g === "number" && g > 0 ? `gen:${g}` : `rv:${o.metadata.resourceVersion ?? ""}`;
}

/** A stable digest of a desired object (keys sorted), to notice when the Work asks for something new. */
export function digest(o: unknown): string {
  return createHash("sha1").update(stableJson(o)).digest("base64url");
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v as Obj)
      .sort()
      .filter((k) => (v as Obj)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Obj)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

/**
 * The member object with Karmada's claim removed (preserveResourcesOnDeletion): the managed
 * label, the Work's permanent id and annotations, and the managed-label/-annotation lists.
 */
export function withoutClaim(o: KubeObject): KubeObject {
  const out = structuredClone(o);
  const labels = { ...(out.metadata.labels ?? {}) };
  delete labels[ManagedByKarmadaLabel];
  delete labels[WorkPermanentIDLabel];
  const annotations = { ...(out.metadata.annotations ?? {}) };
  for (const k of [WorkNamespaceAnnotation, WorkNameAnnotation, ManagedLabels, ManagedAnnotation, ResourceConflictResolutionAnnotation]) delete annotations[k];
  out.metadata.labels = labels;
  out.metadata.annotations = annotations;
  return out;
}

/** Whether two Work statuses say the same (conditions compared without their transition times). */
export function sameWorkStatus(a: WorkStatusJson | undefined, b: WorkStatusJson | undefined): boolean {
  const norm = (s: WorkStatusJson | undefined) => ({
    conditions: (s?.conditions ?? []).map(({ lastTransitionTime: _t, ...c }) => c).sort((x, y) => ((x.type ?? "") < (y.type ?? "") ? -1 : 1)),
    manifestStatuses: s?.manifestStatuses ?? [],
  });
  return isDeepStrictEqual(JSON.parse(JSON.stringify(norm(a))), JSON.parse(JSON.stringify(norm(b))));
}

/**
 * The manifest statuses of a member that cannot be read (cluster not Ready, unreachable, no
 * credential): the last reflected status stays, the health becomes Unknown, so nothing is
 * reported Healthy from an earlier observation.
 */
export function healthUnknown(statuses: readonly ManifestStatus[]): ManifestStatus[] {
  return statuses.map((s) => (s.health === "Unknown" ? s : { ...s, health: "Unknown" }));
}
