import { test } from "node:test";
import assert from "node:assert/strict";
import type { AnyResourceBinding, KubeObject } from "@flotilla/api";
import { listEventsFor, ObjectStore } from "@flotilla/store";
import { eventually, sleep } from "@flotilla/testkit";
import { clusterRef, k8sNow, makeBinding, makeCluster, rbRef, reportStatus, setup, task } from "../int.test-support.js";

const tasksOf = async (store: ObjectStore, name: string) => (await store.get<AnyResourceBinding>(rbRef(name)))?.spec?.gracefulEvictionTasks ?? [];

test("a task without a creationTimestamp gets one and is kept", async () => {
  const env = await setup();
  try {
    await env.store.create(makeCluster("member1", "Unknown"));
    await env.store.create(makeBinding("nginx", 3, [{ name: "member2", replicas: 3 }], [task({ creationTimestamp: undefined })]));
    const t = await eventually(async () => (await tasksOf(env.store, "nginx")).find((x) => x.creationTimestamp));
    assert.equal(t.fromCluster, "member1");
  } finally {
    await env.close();
  }
});

test("the task is dropped once the scheduler caught up and the replacement reports Healthy, with an event on the binding", async () => {
  const env = await setup({ GRACEFUL_EVICTION_TIMEOUT: "10m" });
  try {
    await env.store.create(makeCluster("member1", "Unknown"));
    await env.store.create(makeBinding("nginx", 3, [{ name: "member2", replicas: 3 }], [task()]));
    await reportStatus(env.store, "nginx", { member2: "Unhealthy" });
    await sleep(500);
    assert.equal((await tasksOf(env.store, "nginx")).length, 1, "kept while the replacement is not healthy");
    await reportStatus(env.store, "nginx", { member2: "Healthy" }, false);
    await sleep(500);
    assert.equal((await tasksOf(env.store, "nginx")).length, 1, "kept while the scheduler has not observed the generation");
    await reportStatus(env.store, "nginx", { member2: "Healthy" });
    await eventually(async () => (await tasksOf(env.store, "nginx")).length === 0);
    const rb = await env.store.mustGet<AnyResourceBinding>(rbRef("nginx"));
    assert.equal(rb.spec!.gracefulEvictionTasks, undefined);
    assert.deepEqual(rb.spec!.clusters, [{ name: "member2", replicas: 3 }]);
    const events = await eventually(async () => {
      const e = (await listEventsFor(env.store, rb)).filter((x) => x.reason === "GracefulEvictionTaskRemoved");
      return e.length ? e : undefined;
    });
    assert.match(events[0].message, /member1.*replacement on member2 is healthy/);
    assert.equal(events[0].source.component, "eviction");
    assert.match(await env.app.metrics.text(), /^flotilla_eviction_tasks_removed_total\{why="ReplacementHealthy"\} 1$/m);
  } finally {
    await env.close();
  }
});

test("the task stays past its timeout while nothing could be scheduled and the cluster is down (the last copy is never deleted)", async () => {
  const env = await setup({ GRACEFUL_EVICTION_TIMEOUT: "1s" });
  try {
    await env.store.create(makeCluster("member1", "Unknown"));
    await env.store.create(makeBinding("nginx", 3, [], [task({ replicas: 3 })]));
    await reportStatus(env.store, "nginx", {});
    await sleep(3000);
    assert.equal((await tasksOf(env.store, "nginx")).length, 1);
    const rb = await env.store.mustGet<AnyResourceBinding>(rbRef("nginx"));
    const warn = await eventually(async () => (await listEventsFor(env.store, rb)).find((e) => e.reason === "GracefulEvictionTaskKept"));
    assert.equal(warn.type, "Warning");
    assert.match(warn.message, /nothing could be scheduled/);
  } finally {
    await env.close();
  }
});

test("once the cluster recovers, a task past its timeout with nothing in its place goes and the cluster is scheduled again (no orphaned Work)", async () => {
  const env = await setup({ GRACEFUL_EVICTION_TIMEOUT: "1s" });
  try {
    await env.store.create(makeCluster("member1", "Unknown"));
    await env.store.create(makeBinding("nginx", 3, [], [task({ replicas: 3 })]));
    await sleep(2000);
    assert.equal((await tasksOf(env.store, "nginx")).length, 1);
    const t0 = Date.now();
    await env.store.mutate(clusterRef("member1"), (c) => ({ ...c, status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: k8sNow() }] } }), { status: true });
    await eventually(async () => (await tasksOf(env.store, "nginx")).length === 0, { timeoutMs: 5000 });
    assert.ok(Date.now() - t0 < 2000, "the cluster's wake-up brings the binding back at once");
    const rb = await env.store.mustGet<AnyResourceBinding>(rbRef("nginx"));
    assert.deepEqual(rb.spec!.clusters, [{ name: "member1", replicas: 3 }]);
    const ev = await eventually(async () => (await listEventsFor(env.store, rb)).find((e) => e.reason === "GracefulEvictionTaskRemoved"));
    assert.match(ev.message, /recovered/);
  } finally {
    await env.close();
  }
});

test("at its timeout a task whose replacement is scheduled but not healthy yet is dropped", async () => {
  const env = await setup({ GRACEFUL_EVICTION_TIMEOUT: "2s" });
  try {
    await env.store.create(makeCluster("member1", "Unknown"));
    const created = Date.now();
    await env.store.create(makeBinding("nginx", 3, [{ name: "member2", replicas: 3 }], [task()]));
    await reportStatus(env.store, "nginx", { member2: "Unhealthy" });
    await eventually(async () => (await tasksOf(env.store, "nginx")).length === 0, { timeoutMs: 6000, intervalMs: 50 });
    const ms = Date.now() - created;
    assert.ok(ms >= 1000 && ms < 4000, `dropped ${ms} ms after creation (timeout 2 s, second-precision timestamps)`);
  } finally {
    await env.close();
  }
});

test("a task's gracePeriodSeconds overrides the timeout, and suppressDeletion keeps a task for good", async () => {
  const env = await setup({ GRACEFUL_EVICTION_TIMEOUT: "10m" });
  try {
    await env.store.create(makeCluster("member1", "Unknown"));
    await env.store.create(makeCluster("member3", "Unknown"));
    await env.store.create(makeBinding("nginx", 3, [{ name: "member2", replicas: 3 }], [task({ gracePeriodSeconds: 1 }), task({ fromCluster: "member3", suppressDeletion: true })]));
    await eventually(async () => (await tasksOf(env.store, "nginx")).length === 1, { timeoutMs: 5000 });
    assert.equal((await tasksOf(env.store, "nginx"))[0].fromCluster, "member3");
  } finally {
    await env.close();
  }
});

test("dropping a task racing another writer keeps the other writer's change", async () => {
  let injected = 0;
  const env = await setup({ GRACEFUL_EVICTION_TIMEOUT: "10m" }, {
    store: (s) => {
      const other = s.as("test:other-writer");
      const racing = Object.create(s) as ObjectStore;
      racing.update = async <T extends KubeObject>(obj: T): Promise<T> => {
        if (obj.kind === "ResourceBinding" && injected < 2) {
          injected++;
          // the taint manager evicts another cluster just before
          await other.mutate<AnyResourceBinding>(rbRef(obj.metadata.name!), (b) => {
            b.spec!.gracefulEvictionTasks = [...(b.spec!.gracefulEvictionTasks ?? []), task({ fromCluster: `other-${injected}` })];
            return b;
          });
        }
        return s.update(obj);
      };
      return racing;
    },
  });
  try {
    await env.store.create(makeCluster("member1", "Unknown"));
    await env.store.create(makeBinding("nginx", 3, [{ name: "member2", replicas: 3 }], [task({ creationTimestamp: undefined })]));
    await eventually(async () => injected === 2 && (await tasksOf(env.store, "nginx")).every((t) => t.creationTimestamp));
    const tasks = await tasksOf(env.store, "nginx");
    assert.deepEqual(tasks.map((t) => t.fromCluster).sort(), ["member1", "other-1", "other-2"]);
    assert.equal(env.app.controller.snapshot().metrics.errors.error, 0);
  } finally {
    await env.close();
  }
});
