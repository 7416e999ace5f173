import { test } from "node:test";
import assert from "node:assert/strict";
import type { ResourceBinding } from "@flotilla/api";
import { clusterVerdicts, explainBinding, explainSimulation, explainTarget, type Decision } from "./explain.js";

test("clusterVerdicts: one row per cluster, selected first, every rejecting filter listed", () => {
  const cases: Array<{ name: string; d: Decision; want: unknown }> = [
    { name: "nothing considered", d: { placement: [], feasible: [], rejected: [] }, want: [] },
    {
      name: "divided over two, one not selected, one tainted and also outside the affinity",
      d: {
        placement: [{ name: "member2", replicas: 2 }, { name: "member1", replicas: 1 }],
        feasible: [{ name: "member2", score: 100, availableReplicas: 40, selected: true }, { name: "member1", score: 50, selected: true }, { name: "member4", score: 0, availableReplicas: 3, selected: false }],
        rejected: [{ plugin: "ClusterAffinity", reason: "did not match", clusters: ["member3"] }, { plugin: "TaintToleration", reason: "untolerated taint", clusters: ["member3"] }],
      },
      want: [
        { cluster: "member1", verdict: "selected", replicas: 1, reason: "score 50" },
        { cluster: "member2", verdict: "selected", replicas: 2, reason: "score 100, 40 replicas available" },
        { cluster: "member4", verdict: "not selected", reason: "score 0, 3 replicas available" },
        { cluster: "member3", verdict: "rejected", reason: "ClusterAffinity: did not match; TaintToleration: untolerated taint" },
      ],
    },
    {
      name: "placed but not listed, and rejected but still placed (kept until the eviction)",
      d: { placement: [{ name: "a", replicas: 1 }, { name: "b", replicas: 2 }], feasible: [], rejected: [{ plugin: "TaintToleration", reason: "untolerated", clusters: ["b"] }] },
      want: [
        { cluster: "a", verdict: "placed", replicas: 1, reason: "in the placement (not listed in the diagnosis)" },
        { cluster: "b", verdict: "rejected", replicas: 2, reason: "TaintToleration: untolerated (still in the placement)" },
      ],
    },
    {
      name: "selected unknown: the placement decides",
      d: { placement: [{ name: "a", replicas: 3 }], feasible: [{ name: "a", score: 0 }, { name: "b", score: 0 }], rejected: [] },
      want: [
        { cluster: "a", verdict: "selected", replicas: 3, reason: "score 0" },
        { cluster: "b", verdict: "not selected", reason: "score 0" },
      ],
    },
  ];
  for (const c of cases) assert.deepEqual(clusterVerdicts(c.d), c.want, c.name);
});

test("explainBinding: the binding, its Scheduled condition and the table", () => {
  const rb = {
    kind: "ResourceBinding",
    metadata: { name: "nginx-deployment", namespace: "default" },
    spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "nginx" }, replicas: 3, clusters: [{ name: "member2", replicas: 3 }] },
    status: {
      conditions: [{ type: "Scheduled", status: "True", reason: "Success", message: "Binding has been scheduled successfully." }],
      schedulingDiagnosis: {
        time: "2026-11-24T11:59:30Z",
        trigger: "rescheduleTriggered",
        result: "Success",
        clustersTotal: 3,
        rejected: [{ plugin: "TaintToleration", reason: "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoExecute}", clusters: ["member1"] }],
        feasible: [{ name: "member2", score: 100, availableReplicas: 40, selected: true, replicas: 3 }, { name: "member3", score: 0, availableReplicas: 40, selected: false }],
        feasibleOmitted: 2,
      },
    },
  } as unknown as ResourceBinding;
  assert.equal(
    explainBinding(rb),
    `ResourceBinding default/nginx-deployment: Deployment default/nginx, 3 replicas
Scheduled: True (Success): Binding has been scheduled successfully.
Decision: Success after rescheduleTriggered at 2026-11-24T11:59:30Z; 3 clusters, 4 feasible
CLUSTER   VERDICT        REPLICAS   REASON
member2   selected       3          score 100, 40 replicas available
member3   not selected   -          score 0, 40 replicas available
member1   rejected       -          TaintToleration: cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoExecute}
(2 more feasible clusters not listed)
`,
  );
  const fresh = { kind: "ClusterResourceBinding", metadata: { name: "web-namespace" }, spec: { resource: { kind: "Namespace", name: "web" } } } as unknown as ResourceBinding;
  assert.equal(explainBinding(fresh), "ClusterResourceBinding web-namespace: Namespace web, 0 replicas\nScheduled: not yet\nNo scheduling diagnosis yet (the scheduler has not decided on this binding).\n");
});

test("explainSimulation: the scheduler's answer as the same table", () => {
  const out = explainSimulation({
    clusters: [{ name: "member2", replicas: 3 }],
    diagnosis: { member1: [{ plugin: "TaintToleration", reason: "untolerated taint" }], member3: [{ plugin: "ClusterAffinity", reason: "did not match" }] },
    scores: [{ name: "member2", score: 0 }],
    conditions: [{ type: "Scheduled", status: "True", reason: "Success", message: "ok" }],
  });
  assert.equal(
    out,
    `Scheduled: True (Success): ok
CLUSTER   VERDICT    REPLICAS   REASON
member2   selected   3          score 0
member1   rejected   -          TaintToleration: untolerated taint
member3   rejected   -          ClusterAffinity: did not match
`,
  );
  assert.equal(explainSimulation({ clusters: [], conditions: [{ type: "Scheduled", status: "False", reason: "NoClusterFit", message: "0/0 clusters are available" }] }), "Scheduled: False (NoClusterFit): 0/0 clusters are available\nNo cluster was considered.\n");
});

test("explainTarget: bindings by name, templates by kind and name", () => {
  const cases: Array<[string, string | undefined, unknown]> = [
    ["binding", "default/nginx-deployment", { cluster: false, namespace: "default", name: "nginx-deployment" }],
    ["rb", "nginx-deployment", { cluster: false, namespace: "ns1", name: "nginx-deployment" }],
    ["binding/web/nginx-deployment", undefined, { cluster: false, namespace: "web", name: "nginx-deployment" }],
    ["crb", "web-namespace", { cluster: true, name: "web-namespace" }],
    ["deployment/nginx", undefined, { cluster: false, namespace: "ns1", name: "nginx-deployment" }],
    ["deploy", "nginx", { cluster: false, namespace: "ns1", name: "nginx-deployment" }],
    ["ns/web", undefined, { cluster: true, name: "web-namespace" }],
    ["svc", "Web", { cluster: false, namespace: "ns1", name: "web-service" }],
  ];
  for (const [a, b, want] of cases) assert.deepEqual(explainTarget(a, b, "ns1"), want, `${a} ${b ?? ""}`);
  const bad: Array<[string, string | undefined, RegExp]> = [
    ["binding", undefined, /needs a name/],
    ["deployment/nginx", "extra", /no need to give a name/],
    ["widget/x", undefined, /not "widget"/],
    ["deployment/default/nginx", undefined, /namespace with -n/],
  ];
  for (const [a, b, re] of bad) assert.throws(() => explainTarget(a, b, "ns1"), re, `${a} ${b ?? ""}`);
});
