import { test } from "node:test";
import assert from "node:assert/strict";
import { workName, type KubeObject, type ResourceBinding, type Work } from "@flotilla/api";
import { eventually } from "@flotilla/testkit";
import { RB, WORK, admit, nginxDeployment, releaseWork, schedule, setup, type Env } from "./int.test-support.js";

const APP_RB = { gk: RB, namespace: "default", name: "web-deployment" };
const CM_RB = { gk: RB, namespace: "default", name: "web-config-configmap" };
const SECRET_RB = { gk: RB, namespace: "default", name: "web-credentials-secret" };
const DEPENDED_BY = "resourcebinding.karmada.io/depended-by-";

const depWork = (cluster: string, kind: string, name: string) => ({ gk: WORK, namespace: `karmada-es-${cluster}`, name: workName("default", name, kind) });

/** A Deployment that mounts the ConfigMap web-config and reads a key of the Secret web-credentials. */
function webDeployment(): KubeObject {
  const d = nginxDeployment({ name: "web", replicas: 2 });
  const pod = d.spec.template.spec;
  pod.containers[0].env = [{ name: "PASSWORD", valueFrom: { secretKeyRef: { name: "web-credentials", key: "password" } } }];
  pod.containers[0].volumeMounts = [{ name: "config", mountPath: "/etc/web" }];
  pod.volumes = [{ name: "config", configMap: { name: "web-config" } }];
  return d;
}

const policy: KubeObject = {
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { name: "web", namespace: "default" },
  spec: {
    propagateDeps: true,
    resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web" }],
    placement: { clusterAffinity: { clusterNames: ["member1", "member2"] }, spreadConstraints: [{ spreadByField: "cluster", maxGroups: 1, minGroups: 1 }] },
  },
};

const configMap: KubeObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "web-config", namespace: "default" }, data: { "web.conf": "listen 80" } } as KubeObject;
const secret: KubeObject = { apiVersion: "v1", kind: "Secret", metadata: { name: "web-credentials", namespace: "default" }, type: "Opaque", data: { password: "c2VjcmV0" } } as KubeObject;

/** The clusters that have a live (not deleting) Work of the dependency. */
async function depClusters(env: Env, kind: string, name: string): Promise<string[]> {
  const out: string[] = [];
  for (const c of ["member1", "member2"]) {
    const w = await env.store.get<Work>(depWork(c, kind, name));
    if (w && !w.metadata.deletionTimestamp) out.push(c);
  }
  return out;
}

/** What the execution service does once a deleted Work's member object is gone. */
async function releaseDeleting(env: Env): Promise<void> {
  for (const w of (await env.store.list<Work>(WORK)).items) {
    if (w.metadata.deletionTimestamp) await releaseWork(env.store, { namespace: w.metadata.namespace ?? "", name: w.metadata.name ?? "" });
  }
}

test("propagateDeps: a Deployment's ConfigMap and Secret get attached bindings and Works on exactly its cluster, move with it, and go with it", async () => {
  const env = await setup();
  try {
    await env.store.create(configMap);
    await env.store.create(secret);
    await env.store.create(admit(policy));
    await env.store.create(webDeployment());
    const rb = await eventually(() => env.store.get<ResourceBinding>(APP_RB), { message: "binding created" });
    assert.equal(rb.spec?.propagateDeps, true);
    const parentId = rb.metadata.labels?.["resourcebinding.karmada.io/permanent-id"];
    assert.ok(parentId);

    // scheduled to member1: the dependencies follow it there, and only there
    await schedule(env.store, APP_RB, [{ name: "member1", replicas: 2 }]);
    const [cmRb, secretRb] = await eventually(
      async () => {
        const bs = await Promise.all([env.store.get<ResourceBinding>(CM_RB), env.store.get<ResourceBinding>(SECRET_RB)]);
        return bs.every((b) => b?.spec?.requiredBy?.[0]?.clusters?.[0]?.name === "member1") ? (bs as ResourceBinding[]) : undefined;
      },
      { message: "attached bindings created" },
    );
    for (const [b, obj] of [
      [cmRb, configMap],
      [secretRb, secret],
    ] as const) {
      assert.deepEqual(b.spec?.requiredBy, [{ namespace: "default", name: "web-deployment", clusters: [{ name: "member1" }] }]);
      assert.equal(b.spec?.clusters, undefined, "an attached binding is not scheduled: its clusters come from requiredBy");
      assert.equal(b.spec?.placement, undefined);
      assert.equal(b.metadata.labels?.["propagationpolicy.karmada.io/permanent-id"], undefined, "no policy label: the scheduler leaves it alone");
      const label = Object.entries(b.metadata.labels ?? {}).find(([k]) => k.startsWith(DEPENDED_BY));
      assert.deepEqual(label, ["resourcebinding.karmada.io/depended-by-" + label![0].slice(DEPENDED_BY.length), parentId]);
      assert.equal(b.spec?.resource?.kind, obj.kind);
      assert.equal(b.spec?.resource?.name, obj.metadata.name);
      assert.equal(b.metadata.ownerReferences?.[0]?.kind, obj.kind, "controlled by the dependency object");
      assert.equal(b.spec?.conflictResolution, "Abort", "inherited from the Deployment's binding");
    }
    const parent = await env.store.get<ResourceBinding>(APP_RB);
    assert.ok(parent?.metadata.finalizers?.includes("karmada.io/binding-dependencies-distributor"));
    assert.deepEqual(JSON.parse(parent!.metadata.annotations!["resourcebinding.karmada.io/dependencies"]!), [
      { apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "web-config" },
      { apiVersion: "v1", kind: "Secret", namespace: "default", name: "web-credentials" },
    ]);
    await eventually(
      async () => ((await depClusters(env, "ConfigMap", "web-config")).join() === "member1" && (await depClusters(env, "Secret", "web-credentials")).join() === "member1" ? true : undefined),
      { message: "dependency Works on member1" },
    );
    const w = await env.store.get<Work>(depWork("member1", "ConfigMap", "web-config"));
    const m = w?.spec?.workload?.manifests?.[0] as KubeObject;
    assert.deepEqual((m as { data?: unknown }).data, { "web.conf": "listen 80" });

    // failover: the scheduler moves the Deployment to member2; its dependencies move too
    await schedule(env.store, APP_RB, [{ name: "member2", replicas: 2 }]);
    await eventually(
      async () => ((await depClusters(env, "ConfigMap", "web-config")).join() === "member2" && (await depClusters(env, "Secret", "web-credentials")).join() === "member2" ? true : undefined),
      { message: "dependency Works moved to member2" },
    );
    assert.deepEqual((await env.store.get<ResourceBinding>(CM_RB))?.spec?.requiredBy, [{ namespace: "default", name: "web-deployment", clusters: [{ name: "member2" }] }]);
    await releaseDeleting(env);

    // a dependency changed: its Work follows
    await env.store.mutate<KubeObject>({ gk: "/ConfigMap", namespace: "default", name: "web-config" }, (cur) => ({ ...cur, data: { "web.conf": "listen 8080" } }) as KubeObject);
    await eventually(
      async () => {
        const cw = await env.store.get<Work>(depWork("member2", "ConfigMap", "web-config"));
        return ((cw?.spec?.workload?.manifests?.[0] as { data?: Record<string, string> }) ?? {}).data?.["web.conf"] === "listen 8080" ? true : undefined;
      },
      { message: "the ConfigMap's Work carries its change" },
    );

    // the Deployment is deleted: nothing requires its dependencies any more
    await env.store.delete({ gk: "apps/Deployment", namespace: "default", name: "web" });
    await eventually(
      async () => {
        const left = await Promise.all([env.store.get(APP_RB), env.store.get(CM_RB), env.store.get(SECRET_RB)]);
        await releaseDeleting(env);
        return left.every((b) => !b) ? true : undefined;
      },
      { message: "the Deployment's binding and the attached bindings are gone" },
    );
    await eventually(async () => ((await env.store.list<Work>(WORK)).items.length === 0 ? true : undefined), { message: "every Work gone" });
    assert.ok(await env.store.get({ gk: "/ConfigMap", namespace: "default", name: "web-config" }), "the ConfigMap itself stays");
  } finally {
    await env.close();
  }
});

function sharingDeployment(name: string): KubeObject {
  const d = nginxDeployment({ name, replicas: 1 });
  d.spec.template.spec.containers[0].envFrom = [{ configMapRef: { name: "shared" } }];
  return d;
}

function pinnedPolicy(name: string, cluster: string): KubeObject {
  return {
    apiVersion: "policy.karmada.io/v1alpha1",
    kind: "PropagationPolicy",
    metadata: { name, namespace: "default" },
    spec: { propagateDeps: true, conflictResolution: name === "b" ? "Overwrite" : "Abort", resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name }], placement: { clusterAffinity: { clusterNames: [cluster] } } },
  };
}

test("propagateDeps: a ConfigMap two Deployments need is on the union of their clusters, stays while one needs it, and goes when propagateDeps is turned off", async () => {
  const env = await setup();
  const SHARED_RB = { gk: RB, namespace: "default", name: "shared-configmap" };
  try {
    await env.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "shared", namespace: "default" }, data: { k: "v" } } as KubeObject);
    for (const [name, cluster] of [
      ["a", "member1"],
      ["b", "member2"],
    ] as const) {
      await env.store.create(admit(pinnedPolicy(name, cluster)));
      await env.store.create(sharingDeployment(name));
      const ref = { gk: RB, namespace: "default", name: `${name}-deployment` };
      await eventually(() => env.store.get(ref), { message: `binding of ${name}` });
      await schedule(env.store, ref, [{ name: cluster, replicas: 1 }]);
    }
    const shared = await eventually(
      async () => {
        const b = await env.store.get<ResourceBinding>(SHARED_RB);
        return b?.spec?.requiredBy?.length === 2 && b.spec.requiredBy.every((r) => r.clusters?.length) ? b : undefined;
      },
      { message: "both Deployments require the ConfigMap" },
    );
    assert.deepEqual(shared.spec?.requiredBy, [
      { namespace: "default", name: "a-deployment", clusters: [{ name: "member1" }] },
      { namespace: "default", name: "b-deployment", clusters: [{ name: "member2" }] },
    ]);
    assert.equal(shared.spec?.conflictResolution, "Overwrite", "one of them overwrites");
    assert.equal(Object.keys(shared.metadata.labels ?? {}).filter((k) => k.startsWith(DEPENDED_BY)).length, 2);
    await eventually(async () => ((await depClusters(env, "ConfigMap", "shared")).join() === "member1,member2" ? true : undefined), { message: "on both clusters" });

    // b is deleted: the ConfigMap leaves member2 and stays on member1 for a
    await env.store.delete({ gk: "apps/Deployment", namespace: "default", name: "b" });
    await eventually(async () => ((await depClusters(env, "ConfigMap", "shared")).join() === "member1" ? true : undefined), { message: "only on member1" });
    const left = await env.store.get<ResourceBinding>(SHARED_RB);
    assert.deepEqual(left?.spec?.requiredBy, [{ namespace: "default", name: "a-deployment", clusters: [{ name: "member1" }] }]);
    assert.equal(left?.spec?.conflictResolution, "Abort", "recomputed from the bindings left");
    await releaseDeleting(env);

    // a's policy stops propagating dependencies: the attached binding is released and, needed by nobody, deleted
    await env.store.mutate<KubeObject>({ gk: "policy.karmada.io/PropagationPolicy", namespace: "default", name: "a" }, (cur) => ({ ...cur, spec: { ...cur.spec, propagateDeps: false } }));
    await eventually(
      async () => {
        const [s, a] = await Promise.all([env.store.get(SHARED_RB), env.store.get<ResourceBinding>({ gk: RB, namespace: "default", name: "a-deployment" })]);
        return !s && !a?.metadata.finalizers?.includes("karmada.io/binding-dependencies-distributor") ? true : undefined;
      },
      { message: "attached binding gone, finalizer dropped" },
    );
    await eventually(async () => ((await depClusters(env, "ConfigMap", "shared")).length === 0 ? true : undefined), { message: "ConfigMap Works deleted" });
  } finally {
    await env.close();
  }
});

test("propagateDeps: a dependency created after its workload was propagated is attached then, and one the workload stops referencing is released", async () => {
  const env = await setup();
  try {
    await env.store.create(admit(policy));
    await env.store.create(webDeployment());
    await eventually(() => env.store.get(APP_RB), { message: "binding created" });
    await schedule(env.store, APP_RB, [{ name: "member1", replicas: 2 }]);
    await eventually(
      async () => ((await env.store.get<ResourceBinding>(APP_RB))?.metadata.annotations?.["resourcebinding.karmada.io/dependencies"] ? true : undefined),
      { message: "dependencies recorded" },
    );
    assert.equal(await env.store.get(CM_RB), undefined, "no attached binding for a ConfigMap that does not exist");

    await env.store.create(configMap);
    await eventually(async () => ((await depClusters(env, "ConfigMap", "web-config")).join() === "member1" ? true : undefined), { message: "attached once created" });

    // the Deployment stops mounting the ConfigMap (it still reads the Secret, which does not exist)
    await env.store.mutate<KubeObject>({ gk: "apps/Deployment", namespace: "default", name: "web" }, (cur) => {
      cur.spec.template.spec.volumes = [];
      cur.spec.template.spec.containers[0].volumeMounts = [];
      return cur;
    });
    await eventually(async () => ((await env.store.get(CM_RB)) ? undefined : true), { message: "attached binding released and deleted" });
    await eventually(async () => ((await depClusters(env, "ConfigMap", "web-config")).length === 0 ? true : undefined), { message: "ConfigMap Work deleted" });
  } finally {
    await env.close();
  }
});

test("propagateDeps: a dependency a policy of its own propagates keeps its binding and schedule; requiredBy only adds clusters", async () => {
  const env = await setup();
  try {
    await env.store.create(configMap);
    await env.store.create(
      admit({
        apiVersion: "policy.karmada.io/v1alpha1",
        kind: "PropagationPolicy",
        metadata: { name: "config", namespace: "default" },
        spec: { resourceSelectors: [{ apiVersion: "v1", kind: "ConfigMap", name: "web-config" }], placement: { clusterAffinity: { clusterNames: ["member2"] } } },
      } as KubeObject),
    );
    await eventually(() => env.store.get(CM_RB), { message: "the ConfigMap's own binding" });
    await schedule(env.store, CM_RB, [{ name: "member2" }]);
    await eventually(async () => ((await depClusters(env, "ConfigMap", "web-config")).join() === "member2" ? true : undefined), { message: "on member2 by its own policy" });

    await env.store.create(admit(policy));
    await env.store.create(webDeployment());
    await eventually(() => env.store.get(APP_RB), { message: "binding created" });
    await schedule(env.store, APP_RB, [{ name: "member1", replicas: 2 }]);
    await eventually(async () => ((await depClusters(env, "ConfigMap", "web-config")).join() === "member1,member2" ? true : undefined), { message: "required on member1 too" });
    const b = await env.store.get<ResourceBinding>(CM_RB);
    assert.ok(b?.metadata.labels?.["propagationpolicy.karmada.io/permanent-id"], "still its policy's binding");
    assert.deepEqual(b?.spec?.clusters, [{ name: "member2" }], "its schedule is kept");
    assert.deepEqual(b?.spec?.requiredBy, [{ namespace: "default", name: "web-deployment", clusters: [{ name: "member1" }] }]);

    await env.store.delete({ gk: "apps/Deployment", namespace: "default", name: "web" });
    await eventually(async () => ((await depClusters(env, "ConfigMap", "web-config")).join() === "member2" ? true : undefined), { message: "back to member2 only" });
    const kept = await env.store.get<ResourceBinding>(CM_RB);
    assert.ok(kept && !kept.metadata.deletionTimestamp, "a binding its own policy claims is not deleted");
    assert.deepEqual(kept.spec?.requiredBy ?? [], []);
    assert.equal(Object.keys(kept.metadata.labels ?? {}).some((k) => k.startsWith(DEPENDED_BY)), false);
  } finally {
    await env.close();
  }
});

test("propagateDeps: a binding removed without the distributor's finalizer still has its attached bindings released (found by their depended-by label's index entry)", async () => {
  const env = await setup();
  try {
    await env.store.create(configMap);
    await env.store.create(admit(policy));
    await env.store.create(webDeployment());
    await eventually(() => env.store.get<ResourceBinding>(APP_RB), { message: "binding created" });
    await schedule(env.store, APP_RB, [{ name: "member1", replicas: 2 }]);
    await eventually(async () => ((await env.store.get<ResourceBinding>(CM_RB))?.spec?.requiredBy?.length ? true : undefined), { message: "attached binding created" });
    // the binding goes without the distributor's finalizer (removed by hand, say): its permanent id is gone with it
    await env.store.mutate<ResourceBinding>(APP_RB, (cur) => ({ ...cur, metadata: { ...cur.metadata, finalizers: [] } }));
    await env.store.delete(APP_RB);
    await eventually(async () => ((await env.store.get<ResourceBinding>(CM_RB))?.spec?.requiredBy?.length ? undefined : true), { message: "the attached binding released" });
  } finally {
    await env.close();
  }
});
