import type { AnyResourceBinding, Cluster, GracefulEvictionTask, Placement, ResourceBinding, Taint, TargetCluster } from "@flotilla/api";

/** Options for `makeCluster`; every field has a sensible default for tests and benchmarks. */
export interface ClusterOptions {
  labels?: Record<string, string>;
  provider?: string;
  region?: string;
  zones?: string[];
  taints?: Taint[];
  /** `"apps/v1/Deployment"` entries; default: apps/v1 Deployment and v1 ConfigMap. */
  apis?: string[];
  completeAPIs?: boolean;
  /** Allocatable pods, cpu and memory; `summary: false` leaves `resourceSummary` out. */
  pods?: number;
  cpu?: string;
  memory?: string;
  allocated?: Record<string, string>;
  allocating?: Record<string, string>;
  summary?: boolean;
  deleting?: boolean;
}

/** A Cluster object for tests and benchmarks. */
export function makeCluster(name: string, o: ClusterOptions = {}): Cluster {
  const apis = o.apis ?? ["apps/v1/Deployment", "v1/ConfigMap"];
  const byGv = new Map<string, Array<{ name: string; kind: string }>>();
  for (const a of apis) {
    const i = a.lastIndexOf("/");
    const gv = a.slice(0, i);
    const kind = a.slice(i + 1);
    if (!byGv.has(gv)) byGv.set(gv, []);
    byGv.get(gv)!.push({ name: `${kind.toLowerCase()}s`, kind });
  }
  const c: Cluster = {
    apiVersion: "cluster.karmada.io/v1alpha1",
    kind: "Cluster",
    metadata: { name, labels: o.labels ?? {} },
    spec: {
      ...(o.provider ? { provider: o.provider } : {}),
      ...(o.region ? { region: o.region } : {}),
      ...(o.zones ? { zones: o.zones } : {}),
      ...(o.taints ? { taints: o.taints } : {}),
    },
    status: {
      conditions: [
        { type: "Ready", status: "True" },
        { type: "CompleteAPIEnablements", status: o.completeAPIs === false ? "False" : "True" },
      ],
      apiEnablements: [...byGv].map(([groupVersion, resources]) => ({ groupVersion, resources })),
    },
  };
  if (o.summary !== false) {
    c.status!.resourceSummary = {
      allocatable: { pods: String(o.pods ?? 110), cpu: o.cpu ?? "8", memory: o.memory ?? "32Gi" },
      ...(o.allocated ? { allocated: o.allocated } : {}),
      ...(o.allocating ? { allocating: o.allocating } : {}),
    };
  }
  if (o.deleting) c.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
  return c;
}

/** Options for `makeBinding`. */
export interface BindingOptions {
  name?: string;
  uid?: string;
  apiVersion?: string;
  kind?: string;
  replicas?: number;
  placement?: Placement;
  /** The current `spec.clusters`, as a name → replicas record or a list. */
  clusters?: Record<string, number> | TargetCluster[];
  tasks?: GracefulEvictionTask[];
  resourceRequest?: Record<string, string>;
  annotations?: Record<string, string>;
  generation?: number;
  status?: ResourceBinding["status"];
  rescheduleTriggeredAt?: string;
}

/** A ResourceBinding for a Deployment, for tests and benchmarks. */
export function makeBinding(o: BindingOptions = {}): AnyResourceBinding {
  const clusters = Array.isArray(o.clusters)
    ? o.clusters
    : o.clusters
      ? Object.entries(o.clusters).map(([name, replicas]) => ({ name, replicas }))
      : undefined;
  const name = o.name ?? "nginx";
  return {
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ResourceBinding",
    metadata: {
      name: `${name}-deployment`,
      namespace: "default",
      generation: o.generation ?? 1,
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: {
      resource: { apiVersion: o.apiVersion ?? "apps/v1", kind: o.kind ?? "Deployment", namespace: "default", name, uid: o.uid ?? "" },
      ...(o.replicas !== undefined ? { replicas: o.replicas } : {}),
      ...(o.resourceRequest ? { replicaRequirements: { resourceRequest: o.resourceRequest } } : {}),
      placement: o.placement ?? {},
      ...(clusters ? { clusters } : {}),
      ...(o.tasks ? { gracefulEvictionTasks: o.tasks } : {}),
      ...(o.rescheduleTriggeredAt ? { rescheduleTriggeredAt: o.rescheduleTriggeredAt } : {}),
    },
    ...(o.status ? { status: o.status } : {}),
  };
}

/** Placement helpers. */
export const divided = {
  staticWeights(weights: Record<string, number>): Placement["replicaScheduling"] {
    return {
      replicaSchedulingType: "Divided",
      replicaDivisionPreference: "Weighted",
      weightPreference: {
        staticWeightList: Object.entries(weights).map(([n, weight]) => ({ targetCluster: { clusterNames: [n] }, weight })),
      },
    };
  },
  dynamic(): Placement["replicaScheduling"] {
    return { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { dynamicWeight: "AvailableReplicas" } };
  },
  aggregated(): Placement["replicaScheduling"] {
    return { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
  },
  duplicated(): Placement["replicaScheduling"] {
    return { replicaSchedulingType: "Duplicated" };
  },
};
