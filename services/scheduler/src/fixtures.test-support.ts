// Objects for the scheduler's tests: Clusters with capacity and taints, and bindings shaped like
// the ones the binding service creates (a policy's permanent-id label, the placement).
import { PropagationPolicyPermanentIDLabel, type Cluster, type Placement, type ResourceBinding, type ClusterResourceBinding, type Taint } from "@flotilla/api";

export interface ClusterOptions {
  labels?: Record<string, string>;
  region?: string;
  provider?: string;
  taints?: Taint[];
  pods?: number;
  cpu?: string;
  memory?: string;
  deleting?: boolean;
}

export function cluster(name: string, o: ClusterOptions = {}): Cluster {
  return {
    apiVersion: "cluster.karmada.io/v1alpha1",
    kind: "Cluster",
    metadata: { name, labels: o.labels ?? {} },
    spec: {
      syncMode: "Push",
      ...(o.region ? { region: o.region } : {}),
      ...(o.provider ? { provider: o.provider } : {}),
      ...(o.taints ? { taints: o.taints } : {}),
    },
    status: {
      conditions: [
        { type: "Ready", status: "True", reason: "ClusterReady", message: "cluster is healthy and ready to accept workloads" },
        { type: "CompleteAPIEnablements", status: "True" },
      ],
      apiEnablements: [
        { groupVersion: "apps/v1", resources: [{ name: "deployments", kind: "Deployment" }] },
        { groupVersion: "v1", resources: [{ name: "configmaps", kind: "ConfigMap" }] },
      ],
      resourceSummary: { allocatable: { pods: String(o.pods ?? 110), cpu: o.cpu ?? "8", memory: o.memory ?? "32Gi" } },
    },
  };
}

export const notReadyNoSchedule: Taint = { key: "cluster.karmada.io/not-ready", effect: "NoSchedule" };

export const placements = {
  /** The seed's nginx-propagation: member1 and member2, static weights 1 and 2. */
  seed(): Placement {
    return {
      clusterAffinity: { clusterNames: ["member1", "member2"] },
      replicaScheduling: {
        replicaSchedulingType: "Divided",
        replicaDivisionPreference: "Weighted",
        weightPreference: {
          staticWeightList: [
            { targetCluster: { clusterNames: ["member1"] }, weight: 1 },
            { targetCluster: { clusterNames: ["member2"] }, weight: 2 },
          ],
        },
      },
    };
  },
  duplicated(clusterNames?: string[]): Placement {
    return { ...(clusterNames ? { clusterAffinity: { clusterNames } } : {}), replicaScheduling: { replicaSchedulingType: "Duplicated" } };
  },
  dynamic(clusterNames?: string[]): Placement {
    return {
      ...(clusterNames ? { clusterAffinity: { clusterNames } } : {}),
      replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { dynamicWeight: "AvailableReplicas" } },
    };
  },
  aggregated(clusterNames?: string[]): Placement {
    return { ...(clusterNames ? { clusterAffinity: { clusterNames } } : {}), replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" } };
  },
};

export interface BindingOptions {
  namespace?: string;
  replicas?: number;
  placement?: Placement;
  clusters?: Record<string, number>;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  kind?: string;
  cpu?: string;
}

/** A ResourceBinding for Deployment `name` (a ClusterResourceBinding with `namespace: ""`). */
export function binding(name: string, o: BindingOptions = {}): ResourceBinding | ClusterResourceBinding {
  const ns = o.namespace ?? "default";
  const kind = o.kind ?? "Deployment";
  return {
    apiVersion: "work.karmada.io/v1alpha2",
    kind: ns ? "ResourceBinding" : "ClusterResourceBinding",
    metadata: {
      name: `${name}-${kind.toLowerCase()}`,
      ...(ns ? { namespace: ns } : {}),
      labels: { [PropagationPolicyPermanentIDLabel]: "5f0c8ec4-0b0e-4b55-9d49-1a7e9d1c2a11", ...o.labels },
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: {
      resource: { apiVersion: kind === "ConfigMap" ? "v1" : "apps/v1", kind, ...(ns ? { namespace: ns } : {}), name, uid: "530aa301-760a-48a7-ada0-fc3a2112564b" },
      ...(o.replicas !== undefined ? { replicas: o.replicas } : {}),
      ...(o.cpu ? { replicaRequirements: { resourceRequest: { cpu: o.cpu } } } : {}),
      placement: o.placement ?? placements.seed(),
      ...(o.clusters ? { clusters: Object.entries(o.clusters).map(([n, replicas]) => ({ name: n, replicas })) } : {}),
    },
  };
}
