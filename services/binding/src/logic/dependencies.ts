import { BindingDependedByLabelPrefix, bindingName, fnv1a32, safeEncodeString, type KubeObject, type ResourceBindingSpec, type TargetCluster } from "@flotilla/api";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** configv1alpha1.DependentObjectReference, by name (the native interpreter never uses selectors). */
export interface DependencyRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

export type BindingSnapshot = NonNullable<ResourceBindingSpec["requiredBy"]>[number];

/** The annotation on a binding listing its dependencies (JSON), and the prefix of the label an attached binding carries for each binding that requires it, as upstream. */
export { BindingDependedByLabelPrefix, BindingDependenciesAnnotation } from "@flotilla/api";
/** The finalizer that holds a binding with propagateDeps until its attached bindings are released. */
export const DependenciesDistributorFinalizer = "karmada.io/binding-dependencies-distributor";

/** The kinds a dependency can be (store group/kind), in upstream's order. */
export const DEPENDENCY_KINDS = ["ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim"] as const;

/** The group/kinds the native dependency interpreter knows (their pod spec names the dependencies). */
export const INTERPRETED_KINDS: ReadonlySet<string> = new Set(["apps/Deployment", "apps/StatefulSet", "apps/DaemonSet", "apps/ReplicaSet", "batch/Job", "batch/CronJob", "/Pod", "networking.k8s.io/Ingress"]);

/** The pod spec of a workload (pod template, CronJob's job template, a Pod's own spec); undefined for other kinds. */
function podSpecOf(t: KubeObject): Obj | undefined {
  const spec = isObj(t.spec) ? t.spec : undefined;
  const group = t.apiVersion.includes("/") ? t.apiVersion.slice(0, t.apiVersion.indexOf("/")) : "";
  const podTemplateSpec = (s: unknown): Obj | undefined => (isObj(s) && isObj(s.template) && isObj(s.template.spec) ? s.template.spec : undefined);
  switch (`${group}/${t.kind}`) {
    case "apps/Deployment":
    case "apps/StatefulSet":
    case "apps/DaemonSet":
    case "apps/ReplicaSet":
    case "batch/Job":
      return podTemplateSpec(spec) ?? {};
    case "batch/CronJob":
      return (isObj(spec?.jobTemplate) ? podTemplateSpec(spec.jobTemplate.spec) : undefined) ?? {};
    case "/Pod":
      return spec ?? {};
    default:
      return undefined;
  }
}

const SECRET_REF_SOURCES = ["cephfs", "cinder", "flexVolume", "rbd", "scaleIO", "iscsi", "storageos"] as const;

/**
 * helper.GetDependenciesFromPodTemplate (lifted VisitPodConfigmapNames / VisitPodSecretNames):
 * the ConfigMaps, Secrets, ServiceAccount and PVCs a pod spec references, in that order of
 * kinds, names sorted within a kind (upstream's order within a kind is a set's), empty names skipped.
 */
export function podSpecDependencies(pod: Obj, namespace: string): DependencyRef[] {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  const accounts = new Set<string>();
  const claims = new Set<string>();
  const containers = [...arr(pod.initContainers), ...arr(pod.containers), ...arr(pod.ephemeralContainers)];
  for (const ref of arr(pod.imagePullSecrets)) secrets.add(str(ref.name));
  for (const c of containers) {
    for (const e of arr(c.envFrom)) {
      if (isObj(e.configMapRef)) configMaps.add(str(e.configMapRef.name));
      if (isObj(e.secretRef)) secrets.add(str(e.secretRef.name));
    }
    for (const e of arr(c.env)) {
      if (!isObj(e.valueFrom)) continue;
      if (isObj(e.valueFrom.configMapKeyRef)) configMaps.add(str(e.valueFrom.configMapKeyRef.name));
      if (isObj(e.valueFrom.secretKeyRef)) secrets.add(str(e.valueFrom.secretKeyRef.name));
    }
  }
  for (const v of arr(pod.volumes)) {
    // one source per volume: upstream's switch takes the first that is set
    if (isObj(v.projected)) {
      for (const s of arr(v.projected.sources)) {
        if (isObj(s.configMap)) configMaps.add(str(s.configMap.name));
        if (isObj(s.secret)) secrets.add(str(s.secret.name));
      }
      continue;
    }
    if (isObj(v.configMap)) configMaps.add(str(v.configMap.name));
    else if (isObj(v.secret)) secrets.add(str(v.secret.secretName));
    else if (isObj(v.azureFile)) secrets.add(str(v.azureFile.secretName));
    else if (isObj(v.csi)) {
      if (isObj(v.csi.nodePublishSecretRef)) secrets.add(str(v.csi.nodePublishSecretRef.name));
    } else if (isObj(v.persistentVolumeClaim)) claims.add(str(v.persistentVolumeClaim.claimName));
    else {
      for (const k of SECRET_REF_SOURCES) {
        const src = v[k];
        if (isObj(src)) {
          if (isObj(src.secretRef)) secrets.add(str(src.secretRef.name));
          break;
        }
      }
    }
  }
  const sa = str(pod.serviceAccountName);
  if (sa && sa !== "default") accounts.add(sa);
  const refs = (kind: string, names: Set<string>) =>
    [...names].filter((n) => n).sort().map((name): DependencyRef => ({ apiVersion: "v1", kind, namespace, name }));
  return [...refs("ConfigMap", configMaps), ...refs("Secret", secrets), ...refs("ServiceAccount", accounts), ...refs("PersistentVolumeClaim", claims)];
}

/**
 * getIngressDependencies: the Secret of each `spec.tls[]` entry, in order, each name once. An
 * entry without a secret is skipped (upstream lists it and then fails on the empty name).
 */
function ingressDependencies(t: KubeObject): DependencyRef[] {
  const tls = isObj(t.spec) ? arr(t.spec.tls) : [];
  const names = [...new Set(tls.map((e) => str(e.secretName)).filter((n) => n))];
  return names.map((name) => ({ apiVersion: "v1", kind: "Secret", namespace: t.metadata.namespace ?? "", name }));
}

/**
 * The native dependency interpreter for a template: Deployment, StatefulSet, DaemonSet,
 * ReplicaSet, Job, CronJob and Pod through their pod spec (a StatefulSet drops the PVCs its
 * `volumeClaimTemplates` create), an Ingress's TLS Secrets. Undefined for a kind without the
 * hook (nothing to distribute).
 */
export function dependenciesOf(t: KubeObject): DependencyRef[] | undefined {
  if (t.kind === "Ingress" && t.apiVersion.startsWith("networking.k8s.io/")) return ingressDependencies(t);
  const pod = podSpecOf(t);
  if (!pod) return undefined;
  const deps = podSpecDependencies(pod, t.metadata.namespace ?? "");
  if (t.kind !== "StatefulSet" || !isObj(t.spec)) return deps;
  const templates = new Set(arr(t.spec.volumeClaimTemplates).map((c) => (isObj(c.metadata) ? str(c.metadata.name) : "")));
  return deps.filter((d) => d.kind !== "PersistentVolumeClaim" || !templates.has(d.name));
}

/** The attached binding of a dependency: `GenerateBindingName(kind, name)`, in the dependency's namespace. */
export function attachedBindingName(dep: Pick<DependencyRef, "kind" | "name">): string {
  return bindingName(dep.kind, dep.name);
}

/** `resourcebinding.karmada.io/depended-by-<safeEncode(fnv1a32(ns/name))>`: marks an attached binding as required by that binding. */
export function dependedByLabel(namespace: string, name: string): string {
  return BindingDependedByLabelPrefix + safeEncodeString(String(fnv1a32(namespace ? `${namespace}/${name}` : name)));
}

/** The key dependencies are compared by (kind, apiVersion, namespace, name). */
export function dependencyKey(r: { apiVersion?: string; kind?: string; namespace?: string; name?: string }): string {
  return `${r.kind ?? ""}|${r.apiVersion ?? ""}|${r.namespace ?? ""}|${r.name ?? ""}`;
}

/** The parent's entry in an attached binding's requiredBy: its clusters by name (replicas mean nothing to a dependency). */
export function snapshotOf(namespace: string, name: string, clusters: readonly TargetCluster[] | undefined): BindingSnapshot {
  const names = [...new Set((clusters ?? []).map((c) => c.name ?? "").filter((n) => n))].sort();
  return { namespace, name, clusters: names.map((n) => ({ name: n })) };
}

const bySnapshotKey = (a: BindingSnapshot, b: BindingSnapshot) => {
  const x = `${a.namespace ?? ""}/${a.name ?? ""}`;
  const y = `${b.namespace ?? ""}/${b.name ?? ""}`;
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * mergeBindingSnapshot: the parent's entry replaces the one of the same namespace/name, or is
 * added; `undefined` as the entry removes it (deleteBindingFromSnapshot). Sorted by
 * namespace/name so that the result does not depend on the order the parents came in.
 */
export function withRequiredBy(existing: readonly BindingSnapshot[] | undefined, namespace: string, name: string, entry: BindingSnapshot | undefined): BindingSnapshot[] {
  const out = (existing ?? []).filter((s) => !((s.namespace ?? "") === namespace && s.name === name));
  if (entry) out.push(entry);
  return out.sort(bySnapshotKey);
}

/** The clusters an attached binding's Works go to: the union of its requiredBy clusters, by name. */
export function requiredClusters(requiredBy: readonly BindingSnapshot[] | undefined): string[] {
  return [...new Set((requiredBy ?? []).flatMap((s) => (s.clusters ?? []).map((c) => c.name ?? "")).filter((n) => n))].sort();
}

/**
 * The policy settings an attached binding without a placement of its own takes from the
 * bindings that require it: Overwrite if any of them overwrites, else Abort (undefined with
 * none left); preserveResourcesOnDeletion if any preserves. `conflict` says they disagree
 * (upstream's DependencyPolicyConflict warning).
 */
export function inheritedPolicy(parents: ReadonlyArray<Pick<ResourceBindingSpec, "conflictResolution" | "preserveResourcesOnDeletion"> | undefined>): {
  conflictResolution?: string;
  preserveResourcesOnDeletion?: boolean;
  conflict: boolean;
} {
  if (parents.length === 0) return { conflict: false };
  const overwrite = parents.map((p) => p?.conflictResolution === "Overwrite");
  const preserve = parents.map((p) => p?.preserveResourcesOnDeletion === true);
  const mixed = (xs: boolean[]) => xs.some((x) => x) && xs.some((x) => !x);
  return {
    conflictResolution: overwrite.some((x) => x) ? "Overwrite" : "Abort",
    preserveResourcesOnDeletion: preserve.some((x) => x),
    conflict: mixed(overwrite) || mixed(preserve),
  };
}
