import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@flotilla/api";
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
  assert.deepEqual((toTable({ group: "apps", kind: "Deployment" }, [dep], {}, { now }).rows as Array<{ cells: unknown[] }>)[0]!.cells, ["nginx", "2/3", 3, 2, "10m"]);
  const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", creationTimestamp: created } } as KubeObject;
  const plain = toTable({ group: "", kind: "ConfigMap" }, [cm], {}, { now, includeObject: "None" });
  assert.deepEqual(plain.rows, [{ cells: ["c", "10m"] }]);
});
