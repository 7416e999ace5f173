import { test } from "node:test";
import assert from "node:assert/strict";
import type { Cluster } from "@flotilla/api";
import { topClusters } from "./top.js";
import { joinObjects, parseLabels } from "./join.js";

const cluster = (name: string, resourceSummary?: unknown) => ({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name }, spec: {}, status: resourceSummary ? { resourceSummary } : {} }) as unknown as Cluster;

test("top clusters: requests of bound pods against allocatable, pods used of allowed", () => {
  const got = topClusters([
    cluster("member1", { allocatable: { cpu: "24", memory: "96Gi", pods: "330" }, allocated: { cpu: "1500m", memory: "3Gi", pods: "3" }, allocating: { pods: "2" } }),
    cluster("member2", { allocatable: { cpu: "8", memory: "32Gi", pods: "110" } }),
    cluster("member3"),
  ]);
  assert.deepEqual(got, {
    headers: ["NAME", "CPU(cores)", "CPU%", "MEMORY(bytes)", "MEMORY%", "PODS"],
    rows: [
      ["member1", "1500m", "6%", "3072Mi", "3%", "3/330 (+2 pending)"],
      ["member2", "0m", "0%", "0Mi", "0%", "0/110"],
      ["member3", "<unknown>", "<unknown>", "<unknown>", "<unknown>", "<unknown>"],
    ],
  });
});

test("join writes the member's token and CA in karmada-cluster/<name> and a Push Cluster naming it", () => {
  const { secret, cluster: c } = joinObjects({ server: "https://10.0.0.1:6443", token: "t0k", caData: "PEM", insecure: false, namespace: "default", context: "m" }, { name: "member4", region: "eu", zone: "eu-1a", labels: parseLabels("env=prod,tier=a") });
  assert.deepEqual(secret, { apiVersion: "v1", kind: "Secret", metadata: { name: "member4", namespace: "karmada-cluster" }, type: "Opaque", data: { token: Buffer.from("t0k").toString("base64"), caBundle: Buffer.from("PEM").toString("base64") } });
  assert.deepEqual(c, {
    apiVersion: "cluster.karmada.io/v1alpha1",
    kind: "Cluster",
    metadata: { name: "member4", labels: { env: "prod", tier: "a" } },
    spec: { syncMode: "Push", apiEndpoint: "https://10.0.0.1:6443", secretRef: { namespace: "karmada-cluster", name: "member4" }, region: "eu", zones: ["eu-1a"] },
  });
  assert.equal(joinObjects({ server: "https://x", token: "t", insecure: true, namespace: "", context: "" }, { name: "m" }).cluster.spec?.insecureSkipTLSVerification, true);
  assert.throws(() => parseLabels("novalue"), /invalid label "novalue"/);
});
