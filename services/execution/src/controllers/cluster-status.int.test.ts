import { test } from "node:test";
import assert from "node:assert/strict";
import type { Cluster } from "@flotilla/api";
import { MemberClient, milliValue, value } from "@flotilla/kube";
import { eventually, sleep } from "@flotilla/testkit";
import { condition, deployment, harness, SECRET } from "../int.test-support.js";

type Status = NonNullable<Cluster["status"]>;

test("a joined member turns Ready with its version, API enablements, node summary and a resource summary that match the simulator", async (t) => {
  const h = await harness(t, {
    clusters: [{ name: "member1", kubernetesVersion: "v1.29.3", nodes: [{ name: "a", cpu: "4", memory: "8Gi", pods: 20 }, { name: "b", cpu: "2", memory: "4Gi", pods: 10 }] }],
    readyDelayMs: 30,
  });
  const m1 = h.sim.cluster("member1");
  // two pods fit (1 cpu each on the 6-cpu cluster), one of 8 cpu stays pending
  m1.create(deployment("fits", 2, { cpu: "1", memory: "1Gi" }) as never);
  m1.create(deployment("too-big", 1, { cpu: "8", memory: "1Gi" }) as never);
  await eventually(() => m1.summary().allocating.pods === "1" && m1.summary().allocated.pods === "2");

  await h.join("member1");
  const c = await eventually(async () => {
    const x = await h.getCluster("member1");
    return condition(x, "Ready")?.status === "True" && x?.status?.resourceSummary ? x : undefined;
  });
  const s = c.status as Status;
  assert.equal(condition(c, "Ready")?.reason, "ClusterReady");
  assert.equal(condition(c, "Ready")?.message, "cluster is healthy and ready to accept workloads");
  assert.equal(condition(c, "CompleteAPIEnablements")?.status, "True");
  assert.equal(s.kubernetesVersion, "v1.29.3");
  assert.deepEqual(s.nodeSummary, { totalNum: 2, readyNum: 2 });

  // apiEnablements: exactly what discovery serves, group version by group version
  const direct = await new MemberClient({ server: m1.url, token: m1.token }).discovery();
  assert.deepEqual(s.apiEnablements, direct.enablements);
  const apps = s.apiEnablements?.find((e) => e.groupVersion === "apps/v1");
  assert.ok(apps?.resources?.some((r) => r.name === "deployments" && r.kind === "Deployment"));
  assert.ok(s.apiEnablements?.some((e) => e.groupVersion === "v1" && e.resources?.some((r) => r.kind === "Pod")));

  // resourceSummary equals the simulator's own computation
  const sim = m1.summary();
  const rs = s.resourceSummary!;
  for (const part of ["allocatable", "allocated", "allocating"] as const) {
    assert.equal(milliValue(rs[part]!.cpu!), milliValue(sim[part].cpu), `${part} cpu`);
    assert.equal(value(rs[part]!.memory!), value(sim[part].memory), `${part} memory`);
    assert.equal(value(rs[part]!.pods!), value(sim[part].pods), `${part} pods`);
  }
  assert.deepEqual(rs.allocatable, { cpu: "6", "ephemeral-storage": "200Gi", memory: "12Gi", pods: "30" });
  assert.deepEqual(rs.allocated, { cpu: "2", memory: "2Gi", pods: "2" });
  assert.deepEqual(rs.allocating, { cpu: "8", memory: "1Gi", pods: "1" });
});

test("threshold smoothing: a 2 s blip does not flip Ready, a longer outage does (ClusterNotReachable, then ClusterNotReady), recovery waits for the success threshold", async (t) => {
  const h = await harness(t, { clusters: [{ name: "member1" }], settings: { CLUSTER_FAILURE_THRESHOLD: 3000, CLUSTER_SUCCESS_THRESHOLD: 1500 } });
  await h.join("member1");
  await eventually(async () => condition(await h.getCluster("member1"), "Ready")?.status === "True", { timeoutMs: 10_000 });
  const firstProbes = h.exec.probes.count;

  await h.sim.setFault("member1", { mode: "unreachable" });
  const blipEnd = Date.now() + 2000;
  while (Date.now() < blipEnd) {
    assert.equal(condition(await h.getCluster("member1"), "Ready")?.status, "True", "Ready holds during the blip");
    await sleep(100);
  }
  assert.ok(h.exec.probes.count - firstProbes >= 5, `probed during the blip (${h.exec.probes.count - firstProbes} probes)`);
  await h.sim.setFault("member1", { mode: "healthy" });
  await sleep(1500);
  assert.equal(condition(await h.getCluster("member1"), "Ready")?.status, "True");

  // a real outage: False/ClusterNotReachable once it lasted the failure threshold
  await h.sim.setFault("member1", { mode: "unreachable" });
  const down = Date.now();
  const c = await eventually(async () => {
    const x = await h.getCluster("member1");
    return condition(x, "Ready")?.status === "False" ? x : undefined;
  }, { timeoutMs: 10_000 });
  const flippedAfter = Date.now() - down;
  assert.ok(flippedAfter >= 2800, `flipped after ${flippedAfter} ms, not before the 3 s threshold`);
  assert.equal(condition(c, "Ready")?.reason, "ClusterNotReachable");
  assert.equal(condition(c, "Ready")?.message, "cluster is not reachable");

  // reachable but /readyz 500: ClusterNotReady (False → False needs no threshold)
  await h.sim.setFault("member1", { mode: "not-ready" });
  await eventually(async () => condition(await h.getCluster("member1"), "Ready")?.reason === "ClusterNotReady", { timeoutMs: 5000 });

  // healthy again: True only after the success threshold
  await h.sim.setFault("member1", { mode: "healthy" });
  const up = Date.now();
  await eventually(async () => condition(await h.getCluster("member1"), "Ready")?.status === "True", { timeoutMs: 10_000 });
  assert.ok(Date.now() - up >= 1300, `recovered after ${Date.now() - up} ms, not before the 1.5 s threshold`);
});

test("a wrong token makes the member not Ready; fixing the Secret makes it Ready again (the client is rebuilt)", async (t) => {
  const h = await harness(t, { clusters: [{ name: "member1" }] });
  await h.join("member1", { token: "wrong-token" });
  const c = await eventually(async () => {
    const x = await h.getCluster("member1");
    return condition(x, "Ready") ? x : undefined;
  });
  assert.equal(condition(c, "Ready")?.status, "False");
  assert.equal(condition(c, "Ready")?.reason, "ClusterNotReady", "a 401 is an answer: online but not healthy");

  const secret = (await h.store.get({ gk: SECRET, namespace: "karmada-cluster", name: "member1" }))!;
  await h.store.update({ ...secret, data: { token: Buffer.from(h.sim.cluster("member1").token).toString("base64") } });
  await eventually(async () => condition(await h.getCluster("member1"), "Ready")?.status === "True", { timeoutMs: 10_000 });
});

test("a cluster without an apiEndpoint or with a missing Secret is not Ready with StatusCollectionFailed", async (t) => {
  const h = await harness(t, { clusters: [{ name: "member1" }] });
  await h.store.create({
    apiVersion: "cluster.karmada.io/v1alpha1",
    kind: "Cluster",
    metadata: { name: "member1" },
    spec: { apiEndpoint: h.sim.cluster("member1").url, secretRef: { namespace: "karmada-cluster", name: "absent" } },
  });
  const c = await eventually(async () => {
    const x = await h.getCluster("member1");
    return condition(x, "Ready") ? x : undefined;
  });
  assert.equal(condition(c, "Ready")?.status, "False");
  assert.equal(condition(c, "Ready")?.reason, "StatusCollectionFailed");
  assert.match(condition(c, "Ready")?.message ?? "", /karmada-cluster\/absent/);
});

test("100 members are all probed within one status period", async (t) => {
  const clusters = Array.from({ length: 100 }, (_, i) => ({ name: `m${i + 1}`, nodes: [{ name: "n", cpu: "4", memory: "8Gi", pods: 50 }] }));
  const h = await harness(t, { clusters, settings: { CLUSTER_STATUS_UPDATE_FREQUENCY: 2000 } });
  await Promise.all(clusters.map((c) => h.join(c.name)));
  await eventually(async () => {
    const { items } = await h.store.list<Cluster>("cluster.karmada.io/Cluster");
    return items.length === 100 && items.every((c) => condition(c, "Ready")?.status === "True");
  }, { timeoutMs: 20_000, message: "all 100 Ready" });
  // every member is probed again within one period (plus the timer poll's slack)
  const t0 = Date.now();
  await sleep(2000 + 500);
  const late = clusters.map((c) => c.name).filter((n) => (h.exec.probes.lastAt.get(n) ?? 0) < t0);
  assert.deepEqual(late, [], `${late.length} members not probed within one 2 s period`);
});

test("a Pull cluster is left to its agent: not probed, its Works neither applied nor finalized", async (t) => {
  const h = await harness(t, { clusters: [{ name: "member1" }, { name: "member3" }] });
  const m3 = h.sim.cluster("member3");
  await h.join("member1");
  // member3 has an endpoint and a credential, but is in Pull mode
  await h.store.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "member3", namespace: "karmada-cluster" }, type: "Opaque", data: { token: Buffer.from(m3.token).toString("base64") } });
  await h.store.create<Cluster>({
    apiVersion: "cluster.karmada.io/v1alpha1",
    kind: "Cluster",
    metadata: { name: "member3" },
    spec: { apiEndpoint: m3.url, secretRef: { namespace: "karmada-cluster", name: "member3" }, syncMode: "Pull" },
  });
  await h.work("member3", "web-3", [deployment("web", 1)], { finalizer: false });
  await h.work("member1", "web-1", [deployment("web", 1)]);
  // member1 (Push) is probed and its Work applied meanwhile
  await eventually(async () => condition(await h.getCluster("member1"), "Ready")?.status === "True");
  await eventually(async () => condition(await h.getWork("member1", "web-1"), "Applied")?.status === "True");
  await sleep(1000);
  assert.equal((await h.getCluster("member3"))?.status?.conditions, undefined, "no Ready condition written for member3");
  const w = await h.getWork("member3", "web-3");
  assert.equal(w?.status, undefined, "no status on member3's Work");
  assert.deepEqual(w?.metadata.finalizers ?? [], [], "no finalizer on member3's Work");
  assert.equal(m3.get("apps/v1", "Deployment", "web", "default"), undefined, "nothing applied to member3");
});
