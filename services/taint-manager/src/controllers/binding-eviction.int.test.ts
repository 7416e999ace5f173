import { test } from "node:test";
import assert from "node:assert/strict";
import type { AnyResourceBinding, GracefulEvictionTask, KubeObject, Taint } from "@flotilla/api";
import { listEventsFor, ObjectStore } from "@flotilla/store";
import { eventually, sleep } from "@flotilla/testkit";
import {
  NOT_READY_300,
  UNREACHABLE_300,
  crbRef,
  k8sNow,
  makeBinding,
  makeCluster,
  makeClusterBinding,
  rbRef,
  readyCond,
  setup,
  clusterRef,
} from "../int.test-support.js";

const unreachable = (): Taint => ({ key: "cluster.karmada.io/unreachable", effect: "NoExecute", timeAdded: k8sNow() });
const onCluster = (b: AnyResourceBinding | undefined, c: string) => !!b?.spec?.clusters?.some((t) => t.name === c);
const evicted = (store: ObjectStore, ref: ReturnType<typeof rbRef>, c: string, timeoutMs = 5000) =>
  eventually(async () => {
    const b = await store.get<AnyResourceBinding>(ref);
    return b && !onCluster(b, c) ? b : undefined;
  }, { timeoutMs, intervalMs: 20 });

test("an untolerated NoExecute taint evicts at once into a graceful-eviction task, with an EvictCluster event on the binding", async () => {
  const env = await setup();
  try {
    await env.store.create(makeCluster("member2", { ready: readyCond("True", { heartbeatMs: 0 }) }));
    await env.store.create(makeBinding("nginx", [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]));
    await env.store.create(makeClusterBinding("reader", [{ name: "member1" }]));
    await env.store.create(makeCluster("member1", { ready: readyCond("True", { heartbeatMs: 0 }), taints: [{ key: "maintenance", effect: "NoExecute", timeAdded: k8sNow() }] }));
    const rb = await evicted(env.store, rbRef("nginx"), "member1");
    assert.deepEqual(rb.spec!.clusters, [{ name: "member2", replicas: 2 }]);
    const task = rb.spec!.gracefulEvictionTasks![0] as GracefulEvictionTask;
    assert.equal(task.fromCluster, "member1");
    assert.equal(task.replicas, 1);
    assert.equal(task.reason, "TaintUntolerated");
    assert.equal(task.producer, "TaintManager");
    assert.equal(task.purgeMode, "Gracefully");
    assert.ok(task.creationTimestamp);
    assert.match(task.message ?? "", /maintenance:NoExecute/);
    const crb = await evicted(env.store, crbRef("reader"), "member1");
    assert.equal(crb.spec!.gracefulEvictionTasks![0].fromCluster, "member1");
    assert.equal("replicas" in crb.spec!.gracefulEvictionTasks![0], false);

    const events = await eventually(async () => {
      const e = await listEventsFor(env.store, rb);
      return e.length ? e : undefined;
    });
    assert.equal(events[0].reason, "EvictCluster");
    assert.equal(events[0].type, "Normal");
    assert.equal(events[0].source.component, "taint-manager");
    assert.equal(events[0].involvedObject.name, "nginx");
    assert.equal(events[0].involvedObject.kind, "ResourceBinding");
    assert.match(events[0].message, /member1/);
    const crbEvents = await eventually(async () => {
      const e = await listEventsFor(env.store, crb);
      return e.length ? e : undefined;
    });
    assert.equal(crbEvents[0].metadata.namespace, "default", "cluster-scoped bindings' events go to the default namespace");
    assert.match(await env.app.metrics.text(), /^flotilla_taint_manager_evictions_total\{mode="graceful"\} 2$/m, "both evictions counted");
  } finally {
    await env.close();
  }
});

test("a toleration of N seconds evicts when timeAdded + N passes, not before", async () => {
  const env = await setup();
  try {
    const tol = [{ ...UNREACHABLE_300, tolerationSeconds: 3 }, NOT_READY_300];
    await env.store.create(makeBinding("nginx", [{ name: "member1", replicas: 2 }], { tolerations: tol }));
    const taint = unreachable();
    await env.store.create(makeCluster("member1", { ready: readyCond("Unknown"), taints: [taint] }));
    const addedAt = Date.parse(taint.timeAdded!);
    await sleep(1500);
    assert.ok(onCluster(await env.store.get(rbRef("nginx")), "member1"), "still tolerated");
    await evicted(env.store, rbRef("nginx"), "member1", 6000);
    const delay = Date.now() - addedAt;
    assert.ok(delay >= 3000 && delay < 4500, `evicted ${delay} ms after timeAdded`);
  } finally {
    await env.close();
  }
});

test("a toleration without seconds never evicts", async () => {
  const env = await setup();
  try {
    await env.store.create(makeBinding("nginx", [{ name: "member1", replicas: 2 }], { tolerations: [{ key: "cluster.karmada.io/unreachable", operator: "Exists", effect: "NoExecute" }] }));
    await env.store.create(makeCluster("member1", { ready: readyCond("Unknown"), taints: [unreachable()] }));
    await sleep(3000);
    const b = await env.store.get<AnyResourceBinding>(rbRef("nginx"));
    assert.ok(onCluster(b, "member1"));
    assert.equal(b!.spec!.gracefulEvictionTasks, undefined);
  } finally {
    await env.close();
  }
});

test("the whole chain: Ready Unknown → NoSchedule → NoExecute after the timeout → eviction once the toleration runs out", async () => {
  const env = await setup({ FAILOVER_EVICTION_TIMEOUT: "1s" });
  try {
    await env.store.create(makeCluster("member1", { ready: readyCond("True", { heartbeatMs: 0 }) }));
    await env.store.create(makeBinding("nginx", [{ name: "member1", replicas: 2 }], { tolerations: [{ ...UNREACHABLE_300, tolerationSeconds: 1 }, NOT_READY_300] }));
    const t0 = Date.now();
    await env.store.mutate(clusterRef("member1"), (c) => ({ ...c, status: { conditions: [readyCond("Unknown")] } }), { status: true });
    const rb = await evicted(env.store, rbRef("nginx"), "member1", 8000);
    assert.ok(Date.now() - t0 >= 1000);
    assert.equal(rb.spec!.gracefulEvictionTasks![0].fromCluster, "member1");
  } finally {
    await env.close();
  }
});

test("with graceful eviction off the cluster is removed at once, without a task", async () => {
  const env = await setup({ GRACEFUL_EVICTION: "false" });
  try {
    await env.store.create(makeBinding("nginx", [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]));
    await env.store.create(makeCluster("member1", { ready: readyCond("Unknown"), taints: [unreachable()] }));
    const rb = await evicted(env.store, rbRef("nginx"), "member1");
    assert.deepEqual(rb.spec!.clusters, [{ name: "member2", replicas: 2 }]);
    assert.equal(rb.spec!.gracefulEvictionTasks, undefined);
    const events = await eventually(async () => {
      const e = (await listEventsFor(env.store, rb)).filter((x) => x.reason === "EvictCluster");
      return e.length ? e : undefined;
    });
    assert.match(events[0].message, /graceful eviction off/);
    assert.match(await env.app.metrics.text(), /^flotilla_taint_manager_evictions_total\{mode="immediate"\} 1$/m);
  } finally {
    await env.close();
  }
});

test("the purge mode comes from failover.cluster, else from NO_EXECUTE_TAINT_EVICTION_PURGE_MODE", async () => {
  const env = await setup({ NO_EXECUTE_TAINT_EVICTION_PURGE_MODE: "Directly" });
  try {
    await env.store.create(makeBinding("plain", [{ name: "member1", replicas: 1 }]));
    await env.store.create(makeBinding("graceful", [{ name: "member1", replicas: 1 }], { failover: { cluster: { purgeMode: "Gracefully" } } }));
    await env.store.create(makeCluster("member1", { ready: readyCond("Unknown"), taints: [unreachable()] }));
    const plain = await evicted(env.store, rbRef("plain"), "member1");
    const graceful = await evicted(env.store, rbRef("graceful"), "member1");
    assert.equal(plain.spec!.gracefulEvictionTasks![0].purgeMode, "Directly");
    assert.equal(graceful.spec!.gracefulEvictionTasks![0].purgeMode, "Gracefully");
  } finally {
    await env.close();
  }
});

test("an eviction racing another writer keeps the other writer's change (the write is judged again on the fresh binding)", async () => {
  let injected = 0;
  let other: ObjectStore | undefined;
  const env = await setup({}, {
    store: (s) => {
      other = s.as("test:other-writer");
      // the first two eviction writes lose a race: somebody else writes the binding just before
      const racing = Object.create(s) as ObjectStore;
      racing.update = async <T extends KubeObject>(obj: T): Promise<T> => {
        if (obj.kind === "ResourceBinding" && injected < 2) {
          injected++;
          await other!.mutate(rbRef(obj.metadata.name!), (b) => ({ ...b, metadata: { ...b.metadata, labels: { ...b.metadata.labels, [`other-${injected}`]: "x" } }, spec: { ...b.spec, replicas: 5 } }));
        }
        return s.update(obj);
      };
      return racing;
    },
  });
  try {
    await env.store.create(makeBinding("nginx", [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]));
    await env.store.create(makeCluster("member1", { ready: readyCond("Unknown"), taints: [unreachable()] }));
    const rb = await evicted(env.store, rbRef("nginx"), "member1");
    assert.equal(injected, 2);
    assert.deepEqual(rb.metadata.labels, { "other-1": "x", "other-2": "x" });
    assert.equal(rb.spec!.replicas, 5);
    assert.equal(rb.spec!.gracefulEvictionTasks!.length, 1);
    const s = env.app.controllers.bindingEviction.snapshot();
    assert.equal(s.metrics.errors.error, 0, "conflicts are retried inline, not through the backoff");
  } finally {
    await env.close();
  }
});

test("evictions are paced at RESOURCE_EVICTION_RATE", async () => {
  const env = await setup({ RESOURCE_EVICTION_RATE: "10" });
  try {
    await env.store.create(makeCluster("member2", { ready: readyCond("True", { heartbeatMs: 0 }) }));
    for (let i = 0; i < 25; i++) await env.store.create(makeBinding(`b${i}`, [{ name: "member1", replicas: 1 }]));
    const t0 = Date.now();
    await env.store.create(makeCluster("member1", { ready: readyCond("True", { heartbeatMs: 0 }), taints: [{ key: "maintenance", effect: "NoExecute", timeAdded: k8sNow() }] }));
    for (let i = 0; i < 25; i++) await evicted(env.store, rbRef(`b${i}`), "member1", 10_000);
    const ms = Date.now() - t0;
    // a full bucket (10) goes at once, the other 15 at 10/s
    assert.ok(ms >= 1400 && ms < 4000, `25 evictions at 10/s took ${ms} ms`);
    assert.equal(env.app.pacer.stats.granted, 25);
  } finally {
    await env.close();
  }
});

test("with more than the threshold share of clusters unhealthy evictions slow to the secondary rate", async () => {
  const env = await setup({ RESOURCE_EVICTION_RATE: "1000", SECONDARY_RESOURCE_EVICTION_RATE: "2", UNHEALTHY_CLUSTER_THRESHOLD: "0.55", FAILOVER: "true" });
  try {
    // two of three clusters not Ready: 67% > 55%
    await env.store.create(makeCluster("member2", { ready: readyCond("False") }));
    await env.store.create(makeCluster("member3", { ready: readyCond("True", { heartbeatMs: 0 }) }));
    for (let i = 0; i < 6; i++) await env.store.create(makeBinding(`b${i}`, [{ name: "member1", replicas: 1 }]));
    const t0 = Date.now();
    await env.store.create(makeCluster("member1", { ready: readyCond("Unknown"), taints: [unreachable()] }));
    for (let i = 0; i < 6; i++) await evicted(env.store, rbRef(`b${i}`), "member1", 10_000);
    const ms = Date.now() - t0;
    // bucket of 2 at once, then 4 at 2/s
    assert.ok(ms >= 1800, `6 evictions at the secondary rate of 2/s took ${ms} ms`);
    assert.equal(env.app.pacer.stats.rate, 2);
  } finally {
    await env.close();
  }
});
