/** What the API knows about one kind: where it is served and how it is scoped. */
export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames?: string[];
  /** Has a /status subresource whose writes touch only `.status`. */
  statusSubresource: boolean;
  /** Flotilla API kinds with a proto schema (validated strictly); the rest are opaque templates. */
  typed: boolean;
}

const t = (
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced: boolean,
  opts: Partial<Pick<ResourceType, "shortNames" | "statusSubresource" | "typed">> = {},
): ResourceType => ({
  group,
  version,
  kind,
  plural,
  singular: kind.toLowerCase(),
  namespaced,
  shortNames: opts.shortNames,
  statusSubresource: opts.statusSubresource ?? false,
  typed: opts.typed ?? false,
});

export const KARMADA = {
  cluster: t("cluster.karmada.io", "v1alpha1", "Cluster", "clusters", false, { statusSubresource: true, typed: true }),
  propagationPolicy: t("policy.karmada.io", "v1alpha1", "PropagationPolicy", "propagationpolicies", true, { shortNames: ["pp"], typed: true }),
  clusterPropagationPolicy: t("policy.karmada.io", "v1alpha1", "ClusterPropagationPolicy", "clusterpropagationpolicies", false, { shortNames: ["cpp"], typed: true }),
  overridePolicy: t("policy.karmada.io", "v1alpha1", "OverridePolicy", "overridepolicies", true, { shortNames: ["op"], typed: true }),
  clusterOverridePolicy: t("policy.karmada.io", "v1alpha1", "ClusterOverridePolicy", "clusteroverridepolicies", false, { shortNames: ["cop"], typed: true }),
  clusterTaintPolicy: t("policy.karmada.io", "v1alpha1", "ClusterTaintPolicy", "clustertaintpolicies", false, { typed: true }),
  resourceBinding: t("work.karmada.io", "v1alpha2", "ResourceBinding", "resourcebindings", true, { shortNames: ["rb"], statusSubresource: true, typed: true }),
  clusterResourceBinding: t("work.karmada.io", "v1alpha2", "ClusterResourceBinding", "clusterresourcebindings", false, { shortNames: ["crb"], statusSubresource: true, typed: true }),
  work: t("work.karmada.io", "v1alpha1", "Work", "works", true, { shortNames: ["wk"], statusSubresource: true, typed: true }),
} as const;

export const CORE = {
  namespace: t("", "v1", "Namespace", "namespaces", false, { shortNames: ["ns"], statusSubresource: true }),
  configMap: t("", "v1", "ConfigMap", "configmaps", true, { shortNames: ["cm"] }),
  secret: t("", "v1", "Secret", "secrets", true),
  service: t("", "v1", "Service", "services", true, { shortNames: ["svc"], statusSubresource: true }),
  serviceAccount: t("", "v1", "ServiceAccount", "serviceaccounts", true, { shortNames: ["sa"] }),
  persistentVolumeClaim: t("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", true, { shortNames: ["pvc"], statusSubresource: true }),
  event: t("", "v1", "Event", "events", true, { shortNames: ["ev"] }),
  deployment: t("apps", "v1", "Deployment", "deployments", true, { shortNames: ["deploy"], statusSubresource: true }),
  statefulSet: t("apps", "v1", "StatefulSet", "statefulsets", true, { shortNames: ["sts"], statusSubresource: true }),
  daemonSet: t("apps", "v1", "DaemonSet", "daemonsets", true, { shortNames: ["ds"], statusSubresource: true }),
  replicaSet: t("apps", "v1", "ReplicaSet", "replicasets", true, { shortNames: ["rs"], statusSubresource: true }),
  job: t("batch", "v1", "Job", "jobs", true, { statusSubresource: true }),
  cronJob: t("batch", "v1", "CronJob", "cronjobs", true, { shortNames: ["cj"], statusSubresource: true }),
  ingress: t("networking.k8s.io", "v1", "Ingress", "ingresses", true, { shortNames: ["ing"], statusSubresource: true }),
  networkPolicy: t("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", true, { shortNames: ["netpol"] }),
  hpa: t("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true, { shortNames: ["hpa"], statusSubresource: true }),
  pdb: t("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", true, { shortNames: ["pdb"], statusSubresource: true }),
  role: t("rbac.authorization.k8s.io", "v1", "Role", "roles", true),
  roleBinding: t("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", true),
  clusterRole: t("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", false),
  clusterRoleBinding: t("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", false),
  /** Pull-mode agents renew karmada-cluster/<cluster> (their heartbeat); never a resource template. */
  lease: t("coordination.k8s.io", "v1", "Lease", "leases", true),
  crd: t("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", false, { shortNames: ["crd"], statusSubresource: true }),
} as const;

export const RESOURCE_TYPES: readonly ResourceType[] = [...Object.values(KARMADA), ...Object.values(CORE)];

/**
 * The store's group/kind key ("group/Kind", see `groupKind`) of every kind above, by the same
 * name: `GK.cluster` is "cluster.karmada.io/Cluster", `GK.secret` is "/Secret".
 */
export const GK = Object.freeze(
  Object.fromEntries([...Object.entries(KARMADA), ...Object.entries(CORE)].map(([name, r]) => [name, groupKind(r)])),
) as { readonly [K in keyof typeof KARMADA | keyof typeof CORE]: string };

/** "group/Kind": the store's identity of a kind, independent of its version. */
export function groupKind(r: { group: string; kind: string }): string {
  return `${r.group}/${r.kind}`;
}

export function apiVersionOf(r: { group: string; version: string }): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/** Splits "apps/v1" into group and version ("v1" is the core group). */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.lastIndexOf("/");
  return i < 0 ? { group: "", version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

const byGroupKind = new Map(RESOURCE_TYPES.map((r) => [groupKind(r), r]));
const byPlural = new Map(RESOURCE_TYPES.map((r) => [`${r.group}/${r.plural}`, r]));

export function resourceByKind(apiVersion: string, kind: string): ResourceType | undefined {
  return byGroupKind.get(`${parseApiVersion(apiVersion).group}/${kind}`);
}

export function resourceByPlural(group: string, plural: string): ResourceType | undefined {
  return byPlural.get(`${group}/${plural}`);
}

/** Resource templates: every kind that is not one of Flotilla's own API kinds, an Event or a Lease. */
export function isTemplateType(r: ResourceType): boolean {
  return !r.typed && r.kind !== "Event" && r.kind !== "Lease";
}

/** The namespace Works for a member cluster live in. */
export function executionNamespace(cluster: string): string {
  return `karmada-es-${cluster}`;
}
