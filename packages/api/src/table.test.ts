import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "./types.js";
import { age, toTable, wantsTable } from "./table.js";

const now = new Date("2026-11-24T12:00:00Z");

test("Accept headers that ask for a v1 Table", () => {
  assert.ok(wantsTable("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"));
  assert.ok(wantsTable("application/json; as=Table; g=meta.k8s.io; v=v1"));
  assert.ok(!wantsTable("application/json;as=Table;v=v1beta1;g=meta.k8s.io"));
  assert.ok(!wantsTable("application/json"));
  assert.ok(!wantsTable(undefined));
});

test("ages read as kubectl prints them", () => {
  const ago = (s: number) => new Date(now.getTime() - s * 1000).toISOString();
  assert.deepEqual([age(ago(5), now), age(ago(119), now), age(ago(600), now), age(ago(3 * 3600), now), age(ago(5 * 86400), now), age(ago(800 * 86400), now), age(undefined, now)], ["5s", "119s", "10m", "3h", "5d", "2y", "<unknown>"]);
});

test("Karmada's printer columns, and rows carrying each object's metadata", () => {
  const created = "2026-11-24T11:50:00Z";
  const cluster = { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1", creationTimestamp: created }, spec: { syncMode: "Pull" }, status: { kubernetesVersion: "v1.30.1", conditions: [{ type: "Ready", status: "False" }] } } as KubeObject;
  const t = toTable({ group: "cluster.karmada.io", kind: "Cluster" }, [cluster], { resourceVersion: "42", continue: "tok" }, { now });
  assert.deepEqual((t.columnDefinitions as Array<{ name: string }>).map((c) => c.name), ["Name", "Version", "Mode", "Ready", "Age", "APIEndpoint"]);
  const rows = t.rows as Array<{ cells: unknown[]; object: { kind: string; metadata: unknown } }>;
  assert.deepEqual(rows[0]!.cells, ["m1", "v1.30.1", "Pull", "False", "10m", ""]);
  assert.deepEqual([rows[0]!.object.kind, rows[0]!.object.metadata], ["PartialObjectMetadata", cluster.metadata]);
  assert.deepEqual(t.metadata, { resourceVersion: "42", continue: "tok" });
  const rb = { apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", metadata: { name: "nginx-deployment", creationTimestamp: created }, status: { conditions: [{ type: "Scheduled", status: "True" }, { type: "FullyApplied", status: "True" }] } } as KubeObject;
  assert.deepEqual((toTable({ group: "work.karmada.io", kind: "ResourceBinding" }, [rb], {}, { now }).rows as Array<{ cells: unknown[] }>)[0]!.cells, ["nginx-deployment", "True", "True", "10m"]);
  const dep = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "nginx", creationTimestamp: created }, spec: { replicas: 3 }, status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 } } as KubeObject;
  assert.deepEqual((toTable({ group: "apps", kind: "Deployment" }, [dep], {}, { now }).rows as Array<{ cells: unknown[] }>)[0]!.cells, ["nginx", "2/3", 3, 2, "10m", "", "", "<none>"]);
  // a kind without a printer: NAME and AGE
  const pdb = { apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: { name: "c", creationTimestamp: created } } as KubeObject;
  const plain = toTable({ group: "policy", kind: "PodDisruptionBudget" }, [pdb], {}, { now, includeObject: "None" });
  assert.deepEqual(plain.rows, [{ cells: ["c", "10m"] }]);
});

test("Kubernetes' built-in printers: pods, services, configmaps, namespaces, nodes", () => {
  const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, creationTimestamp: "2026-11-24T11:58:00Z", ...extra });
  const row = (group: string, kind: string, o: Record<string, unknown>, wide = false) => {
    const t = toTable({ group, kind }, [o as KubeObject], {}, { now }) as { columnDefinitions: Array<{ name: string; priority: number }>; rows: Array<{ cells: unknown[] }> };
    const keep = t.columnDefinitions.map((c, i) => [c, i] as const).filter(([c]) => wide || c.priority === 0);
    return Object.fromEntries(keep.map(([c, i]) => [c.name, t.rows[0]!.cells[i]]));
  };
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    [
      "a running pod: ready containers, phase, restarts; wide adds IP and node",
      row("", "Pod", { metadata: meta("web-1"), spec: { nodeName: "node-1", containers: [{}, {}] }, status: { phase: "Running", podIP: "10.244.0.7", containerStatuses: [{ ready: true, restartCount: 1 }, { ready: false, restartCount: 2 }] } }, true),
      { Name: "web-1", Ready: "1/2", Status: "Running", Restarts: "3", Age: "2m", IP: "10.244.0.7", Node: "node-1", "Nominated Node": "<none>", "Readiness Gates": "<none>" },
    ],
    ["a pending pod without status", row("", "Pod", { metadata: meta("p"), spec: { containers: [{}] }, status: { phase: "Pending" } }), { Name: "p", Ready: "0/1", Status: "Pending", Restarts: "0", Age: "2m" }],
    ["a waiting container's reason wins over the phase", row("", "Pod", { metadata: meta("p"), spec: { containers: [{}] }, status: { phase: "Pending", containerStatuses: [{ state: { waiting: { reason: "ImagePullBackOff" } } }] } }), { Name: "p", Ready: "0/1", Status: "ImagePullBackOff", Restarts: "0", Age: "2m" }],
    ["a deleting pod is Terminating", row("", "Pod", { metadata: meta("p", { deletionTimestamp: "2026-11-24T11:59:00Z" }), spec: { containers: [{}] }, status: { phase: "Running" } }), { Name: "p", Ready: "0/1", Status: "Terminating", Restarts: "0", Age: "2m" }],
    [
      "a service: type, cluster IP, ports",
      row("", "Service", { metadata: meta("web"), spec: { type: "NodePort", clusterIP: "10.96.0.10", ports: [{ port: 80, nodePort: 30080, protocol: "TCP" }, { port: 53, protocol: "UDP" }] } }),
      { Name: "web", Type: "NodePort", "Cluster-IP": "10.96.0.10", "External-IP": "<none>", "Port(s)": "80:30080/TCP,53/UDP", Age: "2m" },
    ],
    ["a configmap counts its data", row("", "ConfigMap", { metadata: meta("c"), data: { a: "1", b: "2" } }), { Name: "c", Data: 2, Age: "2m" }],
    ["a namespace is Active by default", row("", "Namespace", { metadata: meta("default") }), { Name: "default", Status: "Active", Age: "2m" }],
    ["a cordoned ready node", row("", "Node", { metadata: meta("n1"), spec: { unschedulable: true }, status: { conditions: [{ type: "Ready", status: "True" }], nodeInfo: { kubeletVersion: "v1.29.0" } } }), { Name: "n1", Status: "Ready,SchedulingDisabled", Roles: "<none>", Age: "2m", Version: "v1.29.0" }],
  ];
  for (const [name, got, want] of cases) assert.deepEqual(got, want, name);
});
