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
