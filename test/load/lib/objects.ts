// The objects the load runners and the cost budget post: Deployments of one container with
// requests, and the ClusterPropagationPolicy that divides them over exactly two clusters.
import type { KubeObject } from "@flotilla/api";

/** A Deployment of `replicas` nginx pods asking for `cpu` and `memory` each (default 100m, 64Mi). */
export function loadDeployment(o: { namespace: string; name: string; replicas: number; cpu?: string; memory?: string }): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: o.name, namespace: o.namespace, labels: { app: o.name } },
    spec: {
      replicas: o.replicas,
      selector: { matchLabels: { app: o.name } },
      template: { metadata: { labels: { app: o.name } }, spec: { containers: [{ name: "app", image: "nginx", resources: { requests: { cpu: o.cpu ?? "100m", memory: o.memory ?? "64Mi" } } }] } },
    },
  };
}

/**
 * A ClusterPropagationPolicy for the Deployments of `namespaces` (a PropagationPolicy selects in
 * its own namespace only): Divided, weighted by available replicas, over exactly 2 clusters; with
 * `noExecuteTolerationSeconds`, tolerating not-ready and unreachable NoExecute taints that long.
 */
export function dividedPolicy(o: { name: string; namespaces: readonly string[]; noExecuteTolerationSeconds?: number }): KubeObject {
  const seconds = o.noExecuteTolerationSeconds;
  return {
    apiVersion: "policy.karmada.io/v1alpha1",
    kind: "ClusterPropagationPolicy",
    metadata: { name: o.name },
    spec: {
      resourceSelectors: o.namespaces.map((namespace) => ({ apiVersion: "apps/v1", kind: "Deployment", namespace })),
      placement: {
        replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { dynamicWeight: "AvailableReplicas" } },
        spreadConstraints: [{ spreadByField: "cluster", maxGroups: 2, minGroups: 2 }],
        ...(seconds !== undefined
          ? { clusterTolerations: ["cluster.karmada.io/not-ready", "cluster.karmada.io/unreachable"].map((key) => ({ key, operator: "Exists", effect: "NoExecute", tolerationSeconds: seconds })) }
          : {}),
      },
    },
  };
}
