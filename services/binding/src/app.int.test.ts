import { test } from "node:test";
import assert from "node:assert/strict";
import { workName, type AnyPropagationPolicy, type AnyResourceBinding, type KubeObject, type Work } from "@flotilla/api";
import { eventually } from "@flotilla/testkit";
import { CRB, RB, WORK, admit, nginxDeployment, nginxPropagation, releaseWork, reportWork, schedule, setup, sleep } from "./int.test-support.js";

const PP = "policy.karmada.io/PropagationPolicy";
const DEPLOY = "apps/Deployment";
const NGINX_RB = { gk: RB, namespace: "default", name: "nginx-deployment" };
const work = (cluster: string, name = "nginx-687f7fb96f") => ({ namespace: `karmada-es-${cluster}`, name });
const replicasOf = (w: Work | undefined) => (w?.spec?.workload?.manifests?.[0] as KubeObject | undefined)?.spec?.replicas;

test("the seed's nginx Deployment and PropagationPolicy yield ResourceBinding nginx-deployment with the template's replicas and requirements and the policy's placement", async () => {
  const env = await setup();
  try {
    const policy = await env.store.create(admit(nginxPropagation()));
    const dep = await env.store.create(nginxDeployment());
    const rb = await eventually(() => env.store.get<AnyResourceBinding>(NGINX_RB), { message: "binding created" });
    assert.equal(rb.spec?.replicas, 3);
    assert.deepEqual(rb.spec?.replicaRequirements, { resourceRequest: { cpu: "100m", memory: "128Mi" } });
    assert.deepEqual(rb.spec?.placement, policy.spec.placement);
    assert.equal(rb.spec?.schedulerName, "default-scheduler");
    assert.equal(rb.spec?.conflictResolution, "Abort");
    assert.equal(rb.spec?.clusters, undefined, "no scheduling result yet");
    assert.deepEqual(
      { ...rb.spec?.resource, resourceVersion: undefined },
      { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "nginx", uid: dep.metadata.uid, resourceVersion: undefined },
    );
    assert.deepEqual(rb.metadata.ownerReferences, [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx", uid: dep.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    assert.deepEqual(rb.metadata.finalizers, ["karmada.io/binding-controller"]);
    const ppId = policy.metadata.labels!["propagationpolicy.karmada.io/permanent-id"]!;
    assert.equal(rb.metadata.labels?.["propagationpolicy.karmada.io/permanent-id"], ppId);
    assert.match(rb.metadata.labels?.["resourcebinding.karmada.io/permanent-id"] ?? "", /^[0-9a-f-]{36}$/);
    assert.deepEqual(rb.metadata.annotations, { "propagationpolicy.karmada.io/namespace": "default", "propagationpolicy.karmada.io/name": "nginx-propagation", "binding.flotilla.io/template-digest": rb.metadata.annotations?.["binding.flotilla.io/template-digest"] });
    assert.match(rb.metadata.annotations?.["binding.flotilla.io/template-digest"] ?? "", /^[\w-]{22}$/);

    const claimed = (await env.store.get({ gk: DEPLOY, namespace: "default", name: "nginx" }))!;
    assert.equal(claimed.metadata.labels?.["propagationpolicy.karmada.io/permanent-id"], ppId, "the template carries the claim");
    assert.equal(claimed.metadata.annotations?.["propagationpolicy.karmada.io/name"], "nginx-propagation");
    const p = (await env.store.get({ gk: PP, namespace: "default", name: "nginx-propagation" }))!;
    assert.deepEqual(p.metadata.finalizers, ["karmada.io/propagation-policy-controller"], "the policy is held until its claims are released");

    // the template changes: the binding follows, the scheduler's result is never touched
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]);
    await env.store.mutate<KubeObject>({ gk: DEPLOY, namespace: "default", name: "nginx" }, (cur) => ({ ...cur, spec: { ...cur.spec, replicas: 5 } }));
    const scaled = await eventually(async () => ((await env.store.get<AnyResourceBinding>(NGINX_RB))?.spec?.replicas === 5 ? env.store.get<AnyResourceBinding>(NGINX_RB) : undefined));
    assert.deepEqual(scaled.spec?.clusters, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]);
  } finally {
    await env.close();
  }
});

test("a hand-written scheduling result yields one Work per cluster with that cluster's replicas, carrying the template", async () => {
  const env = await setup();
  try {
    await env.store.create(admit(nginxPropagation()));
    const dep = await env.store.create(nginxDeployment());
    await eventually(() => env.store.get(NGINX_RB));
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]);
    const [w1, w2] = await eventually(async () => {
      const ws = await Promise.all([env.store.get<Work>({ gk: WORK, ...work("member1") }), env.store.get<Work>({ gk: WORK, ...work("member2") })]);
      return ws.every(Boolean) ? (ws as Work[]) : undefined;
    });
    assert.equal(replicasOf(w1), 1);
    assert.equal(replicasOf(w2), 2);
    const rb = (await env.store.get<AnyResourceBinding>(NGINX_RB))!;
    const rbId = rb.metadata.labels!["resourcebinding.karmada.io/permanent-id"];
    assert.equal(w1!.metadata.labels?.["resourcebinding.karmada.io/permanent-id"], rbId);
    assert.match(w1!.metadata.labels?.["work.karmada.io/permanent-id"] ?? "", /^[0-9a-f-]{36}$/);
    assert.equal(w1!.metadata.annotations?.["resourcebinding.karmada.io/name"], "nginx-deployment");
    assert.equal(w1!.metadata.annotations?.["resourcebinding.karmada.io/namespace"], "default");
    assert.equal(w1!.metadata.annotations?.["work.karmada.io/conflict-resolution"], "abort");
    assert.deepEqual(w1!.metadata.finalizers, ["karmada.io/execution-controller"]);
    const m = w1!.spec!.workload!.manifests![0] as KubeObject;
    assert.equal(m.metadata.uid, undefined, "server fields are pruned");
    assert.equal(m.metadata.resourceVersion, undefined);
    assert.equal(m.metadata.labels?.["karmada.io/managed"], "true");
    assert.equal(m.metadata.annotations?.["resourcetemplate.karmada.io/uid"], dep.metadata.uid);
    assert.deepEqual(m.spec.template, dep.spec.template);

    // the template's image changes: every Work follows, with its own replica count
    await env.store.mutate<KubeObject>({ gk: DEPLOY, namespace: "default", name: "nginx" }, (cur) => {
      cur.spec.template.spec.containers[0].image = "nginx:1.26";
      return cur;
    });
    await eventually(async () => {
      const ws = await Promise.all(["member1", "member2"].map((c) => env.store.get<Work>({ gk: WORK, ...work(c) })));
      return ws.every((w) => (w!.spec!.workload!.manifests![0] as KubeObject).spec.template.spec.containers[0].image === "nginx:1.26");
    });
    assert.deepEqual(
      await Promise.all(["member1", "member2"].map(async (c) => replicasOf(await env.store.get<Work>({ gk: WORK, ...work(c) })))),
      [1, 2],
    );
  } finally {
    await env.close();
  }
});

test("removing a cluster deletes its Work unless a graceful-eviction task names it; a Directly task does not protect it", async () => {
  const env = await setup();
  try {
    await env.store.create(admit(nginxPropagation({ clusters: ["member1", "member2", "member3"] })));
    await env.store.create(nginxDeployment());
    await eventually(() => env.store.get(NGINX_RB));
    const getWork = (c: string) => env.store.get<Work>({ gk: WORK, ...work(c) });
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]);
    await eventually(async () => (await getWork("member1")) && (await getWork("member2")));

    // member2 evicted gracefully: it leaves spec.clusters but keeps its Work while the task lasts
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 3 }], {
      gracefulEvictionTasks: [{ fromCluster: "member2", purgeMode: "Gracefully", replicas: 2, reason: "TaintUntolerated", producer: "TaintManager" }],
    });
    await eventually(async () => replicasOf(await getWork("member1")) === 3);
    await sleep(300);
    assert.equal((await getWork("member2"))?.metadata.deletionTimestamp, undefined, "the evicted cluster keeps its Work");

    // the eviction controller drops the task: now it is an orphan
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 3 }], { gracefulEvictionTasks: [] });
    await eventually(async () => (await getWork("member2"))?.metadata.deletionTimestamp, { message: "orphan work deleted" });
    await releaseWork(env.store, work("member2"));
    await eventually(async () => !(await getWork("member2")));

    // member1 evicted Directly towards member3: its Work goes at once, and member3's Work waits until it is gone
    await schedule(env.store, NGINX_RB, [{ name: "member3", replicas: 3 }], {
      gracefulEvictionTasks: [{ fromCluster: "member1", purgeMode: "Directly", replicas: 3, reason: "TaintUntolerated", producer: "TaintManager" }],
    });
    await eventually(async () => (await getWork("member1"))?.metadata.deletionTimestamp, { message: "Directly: deleted at once" });
    await sleep(500);
    assert.equal(await getWork("member3"), undefined, "the new cluster's Work waits for the Directly-purged one to be gone");
    await releaseWork(env.store, work("member1"));
    const w3 = await eventually(() => getWork("member3"), { message: "member3 work after the purge" });
    assert.equal(replicasOf(w3), 3);
  } finally {
    await env.close();
  }
});

test("a cluster scheduled again while its old Work is still being deleted gets a new Work once the old one is gone", async () => {
  const env = await setup();
  try {
    await env.store.create(admit(nginxPropagation()));
    await env.store.create(nginxDeployment());
    await eventually(() => env.store.get(NGINX_RB));
    const getWork = (c: string) => env.store.get<Work>({ gk: WORK, ...work(c) });
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]);
    await eventually(() => getWork("member2"));
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 3 }]);
    const old = await eventually(async () => ((await getWork("member2"))?.metadata.deletionTimestamp ? getWork("member2") : undefined));
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]);
    await sleep(300);
    assert.equal((await getWork("member2"))?.metadata.uid, old.metadata.uid, "the deleting Work is left to finish");
    await releaseWork(env.store, work("member2")); // the execution service removed the member object
    const fresh = await eventually(async () => {
      const w = await getWork("member2");
      return w && w.metadata.uid !== old.metadata.uid ? w : undefined;
    });
    assert.equal(fresh.metadata.deletionTimestamp, undefined);
    assert.equal(replicasOf(fresh), 2);
  } finally {
    await env.close();
  }
});

test("status reported on the Works aggregates into the binding (aggregatedStatus, FullyApplied) and the Deployment (3/3)", async () => {
  const env = await setup();
  try {
    await env.store.create(admit(nginxPropagation()));
    const dep = await env.store.create(nginxDeployment());
    await eventually(() => env.store.get(NGINX_RB));
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]);
    await eventually(async () => (await env.store.get({ gk: WORK, ...work("member1") })) && (await env.store.get({ gk: WORK, ...work("member2") })));

    const notYet = await eventually(async () => {
      const b = await env.store.get<AnyResourceBinding>(NGINX_RB);
      return b?.status?.aggregatedStatus?.length === 2 ? b : undefined;
    });
    assert.deepEqual(notYet.status?.aggregatedStatus, [
      { clusterName: "member1", applied: false, health: "Unknown" },
      { clusterName: "member2", applied: false, health: "Unknown" },
    ]);
    assert.equal(notYet.status?.conditions?.find((c) => c.type === "FullyApplied")?.status, "False");

    await reportWork(env.store, work("member1"), { status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1, observedGeneration: 1 } });
    await reportWork(env.store, work("member2"), { status: { replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2, observedGeneration: 1 } });
    const rb = await eventually(async () => {
      const b = await env.store.get<AnyResourceBinding>(NGINX_RB);
      return b?.status?.conditions?.find((c) => c.type === "FullyApplied")?.status === "True" ? b : undefined;
    });
    assert.deepEqual(rb.status?.aggregatedStatus, [
      { clusterName: "member1", applied: true, health: "Healthy", status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1, observedGeneration: 1 } },
      { clusterName: "member2", applied: true, health: "Healthy", status: { replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2, observedGeneration: 1 } },
    ]);
    assert.ok(rb.status?.lastScheduledTime, "the scheduler's status fields are kept");

    const d = await eventually(async () => {
      const x = await env.store.get<KubeObject>({ gk: DEPLOY, namespace: "default", name: "nginx" });
      return x?.status?.readyReplicas === 3 ? x : undefined;
    });
    assert.deepEqual(d.status, { replicas: 3, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 3, observedGeneration: d.metadata.generation });
    assert.equal(d.metadata.generation, dep.metadata.generation, "a status write does not move the generation");

    // a member failing to apply shows up in the binding
    await reportWork(env.store, work("member2"), { applied: false, message: "Failed to apply all manifests (0/1): quota exceeded" });
    const failed = await eventually(async () => {
      const b = await env.store.get<AnyResourceBinding>(NGINX_RB);
      return b?.status?.conditions?.find((c) => c.type === "FullyApplied")?.status === "False" ? b : undefined;
    });
    assert.deepEqual(failed.status?.aggregatedStatus?.[1], { clusterName: "member2", applied: false, appliedMessage: "Failed to apply all manifests (0/1): quota exceeded", health: "Unknown" });
    await eventually(async () => (await env.store.get<KubeObject>({ gk: DEPLOY, namespace: "default", name: "nginx" }))?.status?.readyReplicas === 1);
  } finally {
    await env.close();
  }
});

test("a policy update flows into its bindings; suspension stops dispatching on the named clusters without deleting Works", async () => {
  const env = await setup();
  try {
    await env.store.create(admit(nginxPropagation()));
    await env.store.create(nginxDeployment());
    await eventually(() => env.store.get(NGINX_RB));
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]);
    await eventually(async () => (await env.store.get({ gk: WORK, ...work("member2") })));

    const ppRef = { gk: PP, namespace: "default", name: "nginx-propagation" };
    await env.store.mutate<AnyPropagationPolicy>(ppRef, (cur) => ({
      ...cur,
      spec: { ...cur.spec, placement: { ...cur.spec!.placement, clusterAffinity: { clusterNames: ["member1", "member2", "member3"] } }, suspension: { dispatchingOnClusters: { clusterNames: ["member2"] } }, conflictResolution: "Overwrite" },
    }));
    const rb = await eventually(async () => {
      const b = await env.store.get<AnyResourceBinding>(NGINX_RB);
      return b?.spec?.placement?.clusterAffinity?.clusterNames?.length === 3 ? b : undefined;
    });
    assert.deepEqual(rb.spec?.clusters, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }], "the scheduling result is the scheduler's");
    assert.deepEqual(rb.spec?.suspension, { dispatchingOnClusters: { clusterNames: ["member2"] } });
    assert.equal(rb.spec?.conflictResolution, "Overwrite");
    const [w1, w2] = await eventually(async () => {
      const ws = await Promise.all(["member1", "member2"].map((c) => env.store.get<Work>({ gk: WORK, ...work(c) })));
      return ws[1]?.spec?.suspendDispatching ? ws : undefined;
    });
    assert.equal(w1!.spec?.suspendDispatching, false);
    assert.equal(w2!.spec?.suspendDispatching, true);
    assert.equal(w2!.metadata.deletionTimestamp, undefined, "a suspended cluster keeps its Work");
    assert.equal(w1!.metadata.annotations?.["work.karmada.io/conflict-resolution"], "overwrite");
  } finally {
    await env.close();
  }
});

test("deleting the policy drops the claim and keeps the binding and Works; a new matching policy claims again", async () => {
  const env = await setup();
  try {
    const old = await env.store.create(admit(nginxPropagation()));
    await env.store.create(nginxDeployment());
    await eventually(() => env.store.get(NGINX_RB));
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 3 }]);
    await eventually(() => env.store.get({ gk: WORK, ...work("member1") }));

    await env.store.delete({ gk: PP, namespace: "default", name: "nginx-propagation" });
    await eventually(async () => !(await env.store.get({ gk: PP, namespace: "default", name: "nginx-propagation" })), { message: "policy released and gone" });
    const rb = (await env.store.get<AnyResourceBinding>(NGINX_RB))!;
    assert.equal(rb.metadata.labels?.["propagationpolicy.karmada.io/permanent-id"], undefined, "the binding lost the claim");
    assert.equal(rb.metadata.annotations?.["propagationpolicy.karmada.io/name"], undefined);
    assert.deepEqual(rb.spec?.clusters, [{ name: "member1", replicas: 3 }], "and keeps the rest");
    const t = (await env.store.get({ gk: DEPLOY, namespace: "default", name: "nginx" }))!;
    assert.equal(t.metadata.labels?.["propagationpolicy.karmada.io/permanent-id"], undefined, "the template lost the claim");
    const w = await env.store.get<Work>({ gk: WORK, ...work("member1") });
    assert.ok(w && !w.metadata.deletionTimestamp, "the Work stays");

    const next = await env.store.create(admit(nginxPropagation({ name: "nginx-again", clusters: ["member2"] })));
    const reclaimed = await eventually(async () => {
      const b = await env.store.get<AnyResourceBinding>(NGINX_RB);
      return b?.metadata.annotations?.["propagationpolicy.karmada.io/name"] === "nginx-again" ? b : undefined;
    });
    assert.equal(reclaimed.metadata.labels?.["propagationpolicy.karmada.io/permanent-id"], next.metadata.labels!["propagationpolicy.karmada.io/permanent-id"]);
    assert.notEqual(next.metadata.labels!["propagationpolicy.karmada.io/permanent-id"], old.metadata.labels!["propagationpolicy.karmada.io/permanent-id"]);
    assert.deepEqual(reclaimed.spec?.placement?.clusterAffinity?.clusterNames, ["member2"]);
  } finally {
    await env.close();
  }
});

test("a policy whose selectors stop matching a template releases it; another policy may then claim it", async () => {
  const env = await setup();
  try {
    await env.store.create(admit(nginxPropagation()));
    await env.store.create(
      admit({
        apiVersion: "policy.karmada.io/v1alpha1",
        kind: "PropagationPolicy",
        metadata: { name: "fallback", namespace: "default" },
        spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }], placement: { clusterAffinity: { clusterNames: ["member3"] } } },
      }),
    );
    await env.store.create(nginxDeployment());
    await eventually(async () => (await env.store.get(NGINX_RB))?.metadata.annotations?.["propagationpolicy.karmada.io/name"] === "nginx-propagation", { message: "the name selector wins" });
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 3 }]);

    await env.store.mutate<AnyPropagationPolicy>({ gk: PP, namespace: "default", name: "nginx-propagation" }, (cur) => ({
      ...cur,
      spec: { ...cur.spec, resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "other", namespace: "default" }] },
    }));
    const rb = await eventually(async () => {
      const b = await env.store.get<AnyResourceBinding>(NGINX_RB);
      return b?.metadata.annotations?.["propagationpolicy.karmada.io/name"] === "fallback" ? b : undefined;
    });
    assert.deepEqual(rb.spec?.placement?.clusterAffinity?.clusterNames, ["member3"], "released, then claimed by the next best policy");
    assert.deepEqual(rb.spec?.clusters, [{ name: "member1", replicas: 3 }], "the scheduling result stays for the scheduler to redo");
  } finally {
    await env.close();
  }
});

test("deleting the template deletes its binding and, through it, its Works", async () => {
  const env = await setup();
  try {
    await env.store.create(admit(nginxPropagation()));
    await env.store.create(nginxDeployment());
    await eventually(() => env.store.get(NGINX_RB));
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]);
    await eventually(async () => (await env.store.get({ gk: WORK, ...work("member1") })) && (await env.store.get({ gk: WORK, ...work("member2") })));

    await env.store.delete({ gk: DEPLOY, namespace: "default", name: "nginx" });
    // the Works are deleted (their execution finalizer waits for the member objects) and the binding lets go
    await eventually(async () => {
      const ws = await Promise.all(["member1", "member2"].map((c) => env.store.get<Work>({ gk: WORK, ...work(c) })));
      return ws.every((w) => w?.metadata.deletionTimestamp);
    });
    await eventually(async () => !(await env.store.get(NGINX_RB)), { message: "binding gone" });
    for (const c of ["member1", "member2"]) await releaseWork(env.store, work(c));
    await eventually(async () => (await env.store.list(WORK)).items.length === 0);
  } finally {
    await env.close();
  }
});

test("a template no policy matches waits, durably: a policy created while the service is down claims it on restart", async () => {
  const env = await setup();
  try {
    await env.store.create(nginxDeployment({ name: "late" }));
    const lateRb = { gk: RB, namespace: "default", name: "late-deployment" };
    await sleep(500);
    assert.equal(await env.store.get(lateRb), undefined, "no policy, no binding");

    await env.store.create(admit(nginxPropagation({ name: "late-policy", target: "late" })));
    await eventually(() => env.store.get(lateRb), { message: "claimed once the policy appears" });

    // the same with the service down in between: nothing waits in memory
    await env.app.stop();
    await env.store.create(nginxDeployment({ name: "later" }));
    await env.store.create(admit(nginxPropagation({ name: "later-policy", target: "later" })));
    await sleep(300);
    await env.startApp();
    const rb = await eventually(() => env.store.get<AnyResourceBinding>({ gk: RB, namespace: "default", name: "later-deployment" }), { message: "claimed after restart" });
    assert.equal(rb.metadata.annotations?.["propagationpolicy.karmada.io/name"], "later-policy");
  } finally {
    await env.close();
  }
});

test("a ClusterPropagationPolicy propagates a cluster-scoped template through a ClusterResourceBinding; a PP still beats it for namespaced templates", async () => {
  const env = await setup();
  try {
    const cpp = await env.store.create(
      admit<KubeObject>({
        apiVersion: "policy.karmada.io/v1alpha1",
        kind: "ClusterPropagationPolicy",
        metadata: { name: "everything" },
        spec: {
          resourceSelectors: [
            { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name: "system:reader" },
            { apiVersion: "v1", kind: "ConfigMap" },
          ],
          placement: { clusterAffinity: { clusterNames: ["member1"] } },
        },
      }),
    );
    const role = await env.store.create({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "system:reader" }, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] });
    const crbRef = { gk: CRB, namespace: "", name: "system.reader-clusterrole" };
    const crb = await eventually(() => env.store.get<AnyResourceBinding>(crbRef), { message: "ClusterResourceBinding created" });
    assert.equal(crb.kind, "ClusterResourceBinding");
    assert.deepEqual(crb.metadata.finalizers, ["karmada.io/cluster-resource-binding-controller"]);
    assert.equal(crb.metadata.labels?.["clusterpropagationpolicy.karmada.io/permanent-id"], cpp.metadata.labels!["clusterpropagationpolicy.karmada.io/permanent-id"]);
    assert.equal(crb.metadata.annotations?.["clusterpropagationpolicy.karmada.io/name"], "everything");
    assert.equal(crb.spec?.replicas, undefined);

    await schedule(env.store, crbRef, [{ name: "member1" }]);
    const wname = workName("", "system:reader", "ClusterRole");
    const w = await eventually(() => env.store.get<Work>({ gk: WORK, namespace: "karmada-es-member1", name: wname }));
    assert.equal(w.metadata.annotations?.["clusterresourcebinding.karmada.io/name"], "system.reader-clusterrole");
    assert.equal(w.metadata.labels?.["clusterresourcebinding.karmada.io/permanent-id"], crb.metadata.labels!["clusterresourcebinding.karmada.io/permanent-id"]);
    assert.deepEqual((w.spec!.workload!.manifests![0] as KubeObject).rules, role.rules);

    // a namespaced ConfigMap: the CPP claims it with a ResourceBinding, until a PP of its namespace arrives
    await env.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: "web" }, data: { a: "1" } });
    const cmRb = { gk: RB, namespace: "web", name: "settings-configmap" };
    await eventually(async () => (await env.store.get(cmRb))?.metadata.annotations?.["clusterpropagationpolicy.karmada.io/name"] === "everything");
    // a PP of the template's namespace in place first wins over the CPP
    await env.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "mine", namespace: "team" }, data: {} });
    await env.store.create(
      admit({
        apiVersion: "policy.karmada.io/v1alpha1",
        kind: "PropagationPolicy",
        metadata: { name: "team-cms", namespace: "team" },
        spec: { resourceSelectors: [{ apiVersion: "v1", kind: "ConfigMap" }], placement: { clusterAffinity: { clusterNames: ["member2"] } } },
      }),
    );
    await env.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "also-mine", namespace: "team" }, data: {} });
    const byPp = await eventually(async () => {
      const b = await env.store.get<AnyResourceBinding>({ gk: RB, namespace: "team", name: "also-mine-configmap" });
      return b?.metadata.annotations?.["propagationpolicy.karmada.io/name"] ? b : undefined;
    });
    assert.equal(byPp.metadata.annotations?.["clusterpropagationpolicy.karmada.io/name"], undefined, "the PP's claim, not the CPP's");
    assert.deepEqual(byPp.spec?.placement?.clusterAffinity?.clusterNames, ["member2"]);
  } finally {
    await env.close();
  }
});

test("templates in ignored namespaces are never claimed", async () => {
  const env = await setup();
  try {
    await env.store.create(
      admit({
        apiVersion: "policy.karmada.io/v1alpha1",
        kind: "ClusterPropagationPolicy",
        metadata: { name: "all-configmaps" },
        spec: { resourceSelectors: [{ apiVersion: "v1", kind: "ConfigMap" }], placement: {} },
      }),
    );
    for (const ns of ["kube-system", "karmada-system", "karmada-es-member1", "apps"]) {
      await env.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", namespace: ns }, data: {} });
    }
    await eventually(() => env.store.get({ gk: RB, namespace: "apps", name: "cm-configmap" }));
    await sleep(300);
    const rbs = (await env.store.list(RB)).items.map((b) => b.metadata.namespace);
    assert.deepEqual(rbs, ["apps"]);
    // the periodic resync lists keys from the store: the one template outside ignored namespaces, the policy, the binding
    assert.deepEqual([await env.app.detector.resync(), await env.app.policy.resync(), await env.app.binding.resync()], [1, 1, 1]);
  } finally {
    await env.close();
  }
});

test("a scheduler write racing the detector is never lost", async () => {
  const env = await setup();
  try {
    await env.store.create(admit(nginxPropagation()));
    await env.store.create(nginxDeployment());
    await eventually(() => env.store.get(NGINX_RB));
    // many template changes (each rewrites the binding) interleaved with scheduling results
    for (let i = 1; i <= 10; i++) {
      await env.store.mutate<KubeObject>({ gk: DEPLOY, namespace: "default", name: "nginx" }, (cur) => ({ ...cur, spec: { ...cur.spec, replicas: i } }));
      await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: i }]);
    }
    const rb = await eventually(async () => {
      const b = await env.store.get<AnyResourceBinding>(NGINX_RB);
      return b?.spec?.replicas === 10 ? b : undefined;
    });
    assert.deepEqual(rb.spec?.clusters, [{ name: "member1", replicas: 10 }]);
    await eventually(async () => replicasOf(await env.store.get<Work>({ gk: WORK, ...work("member1") })) === 10);
  } finally {
    await env.close();
  }
});

test("activationPreference Lazy: a policy change waits for the template's next change, then applies with it; a non-Lazy policy applies at once", async () => {
  const env = await setup();
  try {
    const lazy = admit(nginxPropagation());
    (lazy.spec as { activationPreference?: string }).activationPreference = "Lazy";
    const policy = await env.store.create(lazy);
    await env.store.create(nginxDeployment());
    const clustersOf = (b: AnyResourceBinding | undefined) => (b?.spec?.placement?.clusterAffinity?.clusterNames ?? []).join(",");
    await eventually(async () => clustersOf(await env.store.get<AnyResourceBinding>(NGINX_RB)) === "member1,member2", { message: "first claim takes the policy at once" });

    // the policy moves to member3: the binding keeps member1,member2 while the template stays as it is
    const ppRef = { gk: PP, namespace: "default", name: policy.metadata.name! };
    await env.store.mutate<KubeObject>(ppRef, (cur) => ({ ...cur, spec: { ...cur.spec, placement: { clusterAffinity: { clusterNames: ["member3"] } } } }));
    // a status-only write to the template is no template change either
    await env.store.mutate<KubeObject>({ gk: DEPLOY, namespace: "default", name: "nginx" }, (cur) => ({ ...cur, status: { replicas: 3, readyReplicas: 3 } }), { status: true });
    await sleep(1500);
    assert.equal(clustersOf(await env.store.get<AnyResourceBinding>(NGINX_RB)), "member1,member2", "held back");

    // the template changes: the policy's change comes with it
    await env.store.mutate<KubeObject>({ gk: DEPLOY, namespace: "default", name: "nginx" }, (cur) => ({ ...cur, spec: { ...cur.spec, replicas: 4 } }));
    const after = await eventually(async () => {
      const b = await env.store.get<AnyResourceBinding>(NGINX_RB);
      return clustersOf(b) === "member3" ? b : undefined;
    }, { message: "the policy's change applies with the template's" });
    assert.equal(after.spec?.replicas, 4);

    // no longer Lazy: the next policy change applies at once
    await env.store.mutate<KubeObject>(ppRef, (cur) => ({ ...cur, spec: { ...cur.spec, activationPreference: undefined, placement: { clusterAffinity: { clusterNames: ["member2"] } } } }));
    await eventually(async () => clustersOf(await env.store.get<AnyResourceBinding>(NGINX_RB)) === "member2", { message: "a non-Lazy change applies at once" });
  } finally {
    await env.close();
  }
});
