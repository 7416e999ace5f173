// The seed's walk-through with the real execution service applying the Works to simulated
// members: the Deployment on the control plane ends up reporting 3/3 ready.
// (It builds another service's app, so it may move to test/e2e.)
import { test } from "node:test";
import assert from "node:assert/strict";
import type { AnyResourceBinding, KubeObject } from "@flotilla/api";
import { jetstream } from "@flotilla/events";
import { buildExecution } from "@flotilla/execution";
import { startSimulator } from "@flotilla/member-sim";
import { eventually } from "@flotilla/testkit";
import { RB, admit, log, nginxDeployment, nginxPropagation, schedule, setup } from "../../../services/binding/src/int.test-support.js";

test("with the execution service and simulated members, the seed's nginx Deployment reports 3/3 ready", async () => {
  const env = await setup();
  const sim = await startSimulator({ admin: false, defaults: { readyDelayMs: 50 }, clusters: [{ name: "member1" }, { name: "member2" }] });
  const exec = buildExecution({
    store: env.store,
    sql: env.db.sql,
    js: jetstream(env.nc),
    log,
    durablePrefix: "execution",
    settings: {
      CLUSTER_STATUS_UPDATE_FREQUENCY: 200,
      CLUSTER_FAILURE_THRESHOLD: 1000,
      CLUSTER_SUCCESS_THRESHOLD: 1000,
      CLUSTER_PROBE_TIMEOUT: 500,
      CLUSTER_CACHE_REFRESH: 200,
      MEMBER_REQUEST_TIMEOUT: 2000,
      WORK_RESYNC_PERIOD: 0,
      MEMBER_ALLOW_HTTP: "loopback",
      EVENTS_STREAM: env.stream,
      EVENTS_PREFIX: env.prefix,
    },
    runner: { timerPollMs: 20, backoff: { baseMs: 20, maxMs: 300 } },
  });
  await exec.start({});
  try {
    for (const name of ["member1", "member2"]) {
      const c = sim.cluster(name);
      await env.store.create({ apiVersion: "v1", kind: "Secret", metadata: { name, namespace: "karmada-cluster" }, type: "Opaque", data: { token: Buffer.from(c.token).toString("base64") } });
      await env.store.create({
        apiVersion: "cluster.karmada.io/v1alpha1",
        kind: "Cluster",
        metadata: { name, finalizers: ["karmada.io/cluster-controller"] },
        spec: { apiEndpoint: c.url, secretRef: { namespace: "karmada-cluster", name }, syncMode: "Push" },
      });
    }
    await env.store.create(admit(nginxPropagation()));
    await env.store.create(nginxDeployment());
    const ref = { gk: RB, namespace: "default", name: "nginx-deployment" };
    await eventually(() => env.store.get(ref));
    await schedule(env.store, ref, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]);

    const dep = await eventually(
      async () => {
        const d = await env.store.get<KubeObject>({ gk: "apps/Deployment", namespace: "default", name: "nginx" });
        return d?.status?.readyReplicas === 3 ? d : undefined;
      },
      { timeoutMs: 20_000, message: "Deployment 3/3 ready" },
    );
    assert.equal(dep.status.replicas, 3);
    assert.equal(dep.status.availableReplicas, 3);
    assert.equal(dep.status.observedGeneration, dep.metadata.generation);
    const member = (c: string) => sim.cluster(c).get("apps/v1", "Deployment", "nginx", "default") as KubeObject | undefined;
    assert.equal(member("member1")?.spec.replicas, 1);
    assert.equal(member("member2")?.spec.replicas, 2);
    const rb = (await env.store.get<AnyResourceBinding>(ref))!;
    assert.equal(rb.status?.conditions?.find((c) => c.type === "FullyApplied")?.status, "True");
    assert.deepEqual(
      rb.status?.aggregatedStatus?.map((i) => [i.clusterName, i.applied, i.health]),
      [
        ["member1", true, "Healthy"],
        ["member2", true, "Healthy"],
      ],
    );
  } finally {
    await exec.stop();
    await sim.close();
    await env.close();
  }
});
