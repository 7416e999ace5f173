// The load test's objects, as data: 100 simulated Clusters (no member simulator; each carries a
// resourceSummary, regions, zones, labels, a few taints) and a mix of binding shapes.
import { PropagationPolicyPermanentIDLabel, type Cluster, type Placement, type ResourceBinding } from "@flotilla/api";

export const NAMESPACE = "load";
const REGIONS = 5;

export function makeClusters(n: number): Cluster[] {
  return Array.from({ length: n }, (_, i) => {
    const region = `region-${i % REGIONS}`;
    return {
      apiVersion: "cluster.karmada.io/v1alpha1",
      kind: "Cluster",
      metadata: { name: clusterName(i), labels: { env: i % 10 === 0 ? "staging" : "prod", tier: i % 10 < 2 ? "edge" : "core" } },
      spec: {
        syncMode: "Push",
        provider: i % 2 === 0 ? "aws" : "gcp",
        region,
        zones: [`${region}-a`, `${region}-b`],
        // a few tainted clusters exercise the filters' reject path
        ...(i % 17 === 0 ? { taints: [{ key: "cluster.karmada.io/not-ready", effect: "NoSchedule" }] } : {}),
      },
      status: {
        conditions: [
          { type: "Ready", status: "True", reason: "ClusterReady" },
          { type: "CompleteAPIEnablements", status: "True" },
        ],
        apiEnablements: [{ groupVersion: "apps/v1", resources: [{ name: "deployments", kind: "Deployment" }] }],
        resourceSummary: {
          allocatable: { pods: String(110 + (i % 7) * 20), cpu: `${16 + (i % 5) * 8}`, memory: `${64 + (i % 4) * 32}Gi` },
          allocated: { pods: String((i * 13) % 90), cpu: `${(i * 1700) % 12000}m`, memory: `${(i * 3) % 40}Gi` },
        },
      },
    };
  });
}

export function clusterName(i: number): string {
  return `member-${String(i).padStart(3, "0")}`;
}

export interface Shape {
  name: string;
  /** Share of the bindings (weights are relative). */
  weight: number;
  replicas: number;
  cpu?: string;
  placement: (i: number, clusters: number) => Placement;
}

const staticPair = (i: number, n: number): Placement => {
  const a = clusterName((i * 7 + 1) % n);
  const b = clusterName((i * 7 + 2) % n);
  return {
    clusterAffinity: { clusterNames: [a, b] },
    clusterTolerations: [{ key: "cluster.karmada.io/not-ready", operator: "Exists", effect: "NoSchedule" }],
    replicaScheduling: {
      replicaSchedulingType: "Divided",
      replicaDivisionPreference: "Weighted",
      weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: [a] }, weight: 1 }, { targetCluster: { clusterNames: [b] }, weight: 2 }] },
    },
  };
};

/** The binding mix: the seed's static weights, dynamic weights with region and cluster spread, Duplicated to the edge tier, Aggregated. */
export const SHAPES: Shape[] = [
  { name: "static-weights", weight: 3, replicas: 3, placement: staticPair },
  {
    name: "dynamic-spread",
    weight: 3,
    replicas: 12,
    cpu: "250m",
    placement: () => ({
      clusterAffinity: { labelSelector: { matchLabels: { env: "prod" } } },
      spreadConstraints: [
        { spreadByField: "region", minGroups: 2, maxGroups: 3 },
        { spreadByField: "cluster", minGroups: 3, maxGroups: 6 },
      ],
      replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { dynamicWeight: "AvailableReplicas" } },
    }),
  },
  { name: "duplicated-edge", weight: 2, replicas: 2, placement: () => ({ clusterAffinity: { labelSelector: { matchLabels: { tier: "edge" } } }, replicaScheduling: { replicaSchedulingType: "Duplicated" } }) },
  { name: "aggregated", weight: 2, replicas: 8, cpu: "500m", placement: () => ({ clusterAffinity: { fieldSelector: { matchExpressions: [{ key: "region", operator: "In", values: ["region-1", "region-2"] }] } }, replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" } }) },
];

const totalWeight = SHAPES.reduce((s, x) => s + x.weight, 0);

export function shapeOf(i: number): Shape {
  let k = i % totalWeight;
  for (const s of SHAPES) {
    if (k < s.weight) return s;
    k -= s.weight;
  }
  return SHAPES[0];
}

export function makeBinding(i: number, clusters: number): ResourceBinding {
  const s = shapeOf(i);
  const name = `app-${String(i).padStart(5, "0")}`;
  return {
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ResourceBinding",
    metadata: { name: `${name}-deployment`, namespace: NAMESPACE, labels: { [PropagationPolicyPermanentIDLabel]: "0b6c3a9e-6d7f-4a51-9a5e-3c1f3f1d2e10", "load.flotilla.io/shape": s.name } },
    spec: {
      resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: NAMESPACE, name, uid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}` },
      replicas: s.replicas,
      ...(s.cpu ? { replicaRequirements: { resourceRequest: { cpu: s.cpu, memory: "256Mi" } } } : {}),
      placement: s.placement(i, clusters),
    },
  };
}
