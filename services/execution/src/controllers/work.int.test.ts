import { test } from "node:test";
import assert from "node:assert/strict";
import { ExecutionControllerFinalizer, ManagedByKarmadaLabel, ResourceConflictResolutionAnnotation, WorkNameAnnotation, type Cluster } from "@flotilla/api";
import { eventually } from "@flotilla/testkit";
import { condition, configMap, deployment, harness, CLUSTER } from "../int.test-support.js";

const dataOf = (o: unknown): Record<string, string> | undefined => (o as { data?: Record<string, string> } | undefined)?.data;

test("a Work is applied to its member, updated there when it changes, and its status and health follow the member", async (t) => {
  const h = await harness(t, { clusters: [{ name: "member1" }], readyDelayMs: 150 });
  await h.join("member1");
  await eventually(async () => condition(await h.getCluster("member1"), "Ready")?.status === "True", { timeoutMs: 10_000, message: "member1 Ready" });
  const m1 = h.sim.cluster("member1");

  await h.work("member1", "web-abc", [deployment("web", 2), configMap("web-config", { mode: "a" })]);

  const applied = await eventually(async () => {
    const w = await h.getWork("member1", "web-abc");
    return condition(w, "Applied")?.status === "True" ? w : undefined;
  });
  assert.equal(condition(applied, "Applied")?.reason, "AppliedSuccessful");
  assert.equal(condition(applied, "Dispatching")?.status, "True");
  const d = m1.get("apps/v1", "Deployment", "web", "default");
  assert.ok(d, "the Deployment exists on member1");
  assert.equal(d.metadata.labels?.[ManagedByKarmadaLabel], "true");
  assert.equal((d.metadata.annotations as Record<string, string>)[WorkNameAnnotation], "web-abc");
  assert.equal(dataOf(m1.get("v1", "ConfigMap", "web-config", "default"))?.mode, "a");

  // readiness on the member shows up in the Work's manifestStatuses
  const healthy = await eventually(async () => {
    const w = await h.getWork("member1", "web-abc");
    const ms = (w?.status as { manifestStatuses?: { identifier: { kind: string; ordinal: number }; health: string; status?: Record<string, unknown> }[] })?.manifestStatuses;
    const dep = ms?.find((m) => m.identifier.kind === "Deployment");
    return dep?.health === "Healthy" ? ms : undefined;
  });
  const dep = healthy.find((m) => m.identifier.kind === "Deployment")!;
  assert.deepEqual(dep.identifier, { ordinal: 0, group: "apps", version: "v1", kind: "Deployment", resource: "deployments", namespace: "default", name: "web" });
  assert.equal(dep.status?.readyReplicas, 2);
  assert.equal(dep.status?.updatedReplicas, 2);
  const cm = healthy.find((m) => m.identifier.kind === "ConfigMap")!;
  assert.equal(cm.health, "Healthy");
  assert.equal(cm.identifier.ordinal, 1);

  // the Work changes: the member object is updated, health drops until the new spec is ready, then recovers
  const w = (await h.getWork("member1", "web-abc"))!;
  await h.store.update({ ...w, spec: { workload: { manifests: [deployment("web", 3, { image: "nginx:1.26" }) as never, configMap("web-config", { mode: "b" }) as never] } } });
  await eventually(() => m1.get("apps/v1", "Deployment", "web", "default")?.spec?.replicas === 3 && dataOf(m1.get("v1", "ConfigMap", "web-config", "default"))?.mode === "b");
  await eventually(async () => {
    const cur = await h.getWork("member1", "web-abc");
    const ms = (cur?.status as { manifestStatuses?: { identifier: { kind: string }; health: string; status?: Record<string, unknown> }[] })?.manifestStatuses;
    const x = ms?.find((m) => m.identifier.kind === "Deployment");
    return x?.health === "Healthy" && x.status?.readyReplicas === 3;
  });

  // someone deletes the object on the member: it is recreated
  m1.delete("v1", "ConfigMap", "web-config", "default");
  await eventually(() => dataOf(m1.get("v1", "ConfigMap", "web-config", "default"))?.mode === "b");
});

test("conflictResolution Abort leaves a member object Karmada does not manage and reports it; Overwrite takes it over", async (t) => {
  const h = await harness(t, { clusters: [{ name: "member1" }] });
  await h.join("member1");
  await eventually(async () => condition(await h.getCluster("member1"), "Ready")?.status === "True", { timeoutMs: 10_000 });
  const m1 = h.sim.cluster("member1");
  m1.create(configMap("owned-elsewhere", { who: "someone" }));
  m1.create(configMap("taken-over", { who: "someone" }));

  await h.work("member1", "abort-work", [configMap("owned-elsewhere", { who: "karmada" })]);
  const failed = await eventually(async () => {
    const w = await h.getWork("member1", "abort-work");
    return condition(w, "Applied")?.status === "False" ? w : undefined;
  });
  const c = condition(failed, "Applied")!;
  assert.equal(c.reason, "AppliedFailed");
  assert.match(c.message ?? "", /^Failed to apply all manifests \(0\/1\): resource\(kind=ConfigMap, default\/owned-elsewhere\) already exists in the cluster member1/);
  assert.equal(dataOf(m1.get("v1", "ConfigMap", "owned-elsewhere", "default"))?.who, "someone");

  // Overwrite on the manifest
  await h.work("member1", "overwrite-work", [{ ...configMap("taken-over", { who: "karmada" }), metadata: { name: "taken-over", namespace: "default", annotations: { [ResourceConflictResolutionAnnotation]: "overwrite" } } }]);
  await eventually(async () => condition(await h.getWork("member1", "overwrite-work"), "Applied")?.status === "True");
  const taken = m1.get("v1", "ConfigMap", "taken-over", "default")!;
  assert.equal(dataOf(taken)?.who, "karmada");
  assert.equal(taken.metadata.labels?.[ManagedByKarmadaLabel], "true");

  // Overwrite on the Work works as well
  await h.work("member1", "abort-then-overwrite", [configMap("owned-elsewhere", { who: "karmada" })], { annotations: { [ResourceConflictResolutionAnnotation]: "overwrite" } });
  await eventually(async () => condition(await h.getWork("member1", "abort-then-overwrite"), "Applied")?.status === "True");
  assert.equal(dataOf(m1.get("v1", "ConfigMap", "owned-elsewhere", "default"))?.who, "karmada");
});

test("a Work deleted while its member is unreachable keeps its finalizer; when the member is back the object is removed there and the Work is gone", async (t) => {
  const h = await harness(t, { clusters: [{ name: "member1" }] });
  await h.join("member1");
  await eventually(async () => condition(await h.getCluster("member1"), "Ready")?.status === "True", { timeoutMs: 10_000 });
  const m1 = h.sim.cluster("member1");
  await h.work("member1", "foo", [deployment("foo", 1)]);
  await eventually(async () => condition(await h.getWork("member1", "foo"), "Applied")?.status === "True");
  assert.ok(m1.get("apps/v1", "Deployment", "foo", "default"));

  await h.sim.setFault("member1", { mode: "unreachable" });
  await eventually(async () => condition(await h.getCluster("member1"), "Ready")?.status === "False", { timeoutMs: 10_000, message: "member1 not Ready" });
  assert.equal(condition(await h.getCluster("member1"), "Ready")?.reason, "ClusterNotReachable");

  await h.store.delete({ gk: "work.karmada.io/Work", namespace: "karmada-es-member1", name: "foo" });
  await new Promise((r) => setTimeout(r, 1500));
  const held = await h.getWork("member1", "foo");
  assert.ok(held?.metadata.deletionTimestamp, "the Work is deleting");
  assert.deepEqual(held?.metadata.finalizers, [ExecutionControllerFinalizer], "the finalizer is kept while the member is unreachable");
  assert.ok(m1.get("apps/v1", "Deployment", "foo", "default"), "the member still has the object (it kept its state)");

  await h.sim.setFault("member1", { mode: "healthy" });
  await eventually(async () => (await h.getWork("member1", "foo")) === undefined, { timeoutMs: 15_000, message: "the Work is gone" });
  assert.equal(m1.get("apps/v1", "Deployment", "foo", "default"), undefined, "the object was removed on the member");
});

test("a Work of a cluster being deleted is released at once, without contacting the member", async (t) => {
  const h = await harness(t, { clusters: [{ name: "member1" }] });
  await h.join("member1");
  await eventually(async () => condition(await h.getCluster("member1"), "Ready")?.status === "True", { timeoutMs: 10_000 });
  const m1 = h.sim.cluster("member1");
  await h.work("member1", "bar", [configMap("bar", { a: "1" })]);
  await eventually(async () => condition(await h.getWork("member1", "bar"), "Applied")?.status === "True");

  // the member is unreachable and the cluster is being deleted (its cluster-controller finalizer holds it)
  await h.sim.setFault("member1", { mode: "unreachable" });
  await eventually(async () => condition(await h.getCluster("member1"), "Ready")?.status === "False", { timeoutMs: 10_000 });
  await h.store.delete({ gk: CLUSTER, name: "member1" });
  assert.ok(((await h.getCluster("member1")) as Cluster).metadata.deletionTimestamp);
  await h.store.delete({ gk: "work.karmada.io/Work", namespace: "karmada-es-member1", name: "bar" });
  await eventually(async () => (await h.getWork("member1", "bar")) === undefined, { timeoutMs: 5_000, message: "the Work is released" });
  await h.sim.setFault("member1", { mode: "healthy" });
  assert.equal(dataOf(m1.get("v1", "ConfigMap", "bar", "default"))?.a, "1", "the member was not contacted");
});

test("a Work with suspendDispatching is not applied and says so", async (t) => {
  const h = await harness(t, { clusters: [{ name: "member1" }] });
  await h.join("member1");
  await eventually(async () => condition(await h.getCluster("member1"), "Ready")?.status === "True", { timeoutMs: 10_000 });
  await h.work("member1", "paused", [configMap("paused", { a: "1" })], { suspend: true });
  const w = await eventually(async () => {
    const x = await h.getWork("member1", "paused");
    return condition(x, "Dispatching") ? x : undefined;
  });
  assert.deepEqual(
    { status: condition(w, "Dispatching")?.status, reason: condition(w, "Dispatching")?.reason },
    { status: "False", reason: "SuspendDispatching" },
  );
  assert.equal(condition(w, "Applied"), undefined);
  assert.equal(h.sim.cluster("member1").get("v1", "ConfigMap", "paused", "default"), undefined);

  // resuming dispatches it
  await h.store.update({ ...w, spec: { ...w.spec, suspendDispatching: false } });
  await eventually(async () => condition(await h.getWork("member1", "paused"), "Applied")?.status === "True");
  assert.equal(dataOf(h.sim.cluster("member1").get("v1", "ConfigMap", "paused", "default"))?.a, "1");
});

test("a Work without the finalizer gets it before anything is applied", async (t) => {
  const h = await harness(t, { clusters: [{ name: "member1" }] });
  await h.join("member1");
  await eventually(async () => condition(await h.getCluster("member1"), "Ready")?.status === "True", { timeoutMs: 10_000 });
  await h.work("member1", "nofin", [configMap("nofin", { a: "1" })], { finalizer: false });
  const w = await eventually(async () => {
    const x = await h.getWork("member1", "nofin");
    return condition(x, "Applied")?.status === "True" ? x : undefined;
  });
  assert.deepEqual(w.metadata.finalizers, [ExecutionControllerFinalizer]);
});
