import { test } from "node:test";
import assert from "node:assert/strict";
import type { AnyResourceBinding } from "@flotilla/api";
import { listEventsFor, type ObjectStore } from "@flotilla/store";
import { eventually, sleep } from "@flotilla/testkit";
import { UnhealthySinceAnnotation } from "../logic/application-failover.js";
import { silentLogger } from "@flotilla/log";
import { buildApp } from "../app.js";
import { makeBinding, rbRef, reportStatus, setup } from "../int.test-support.js";

/** A Duplicated binding on `clusters` whose policy sets application failover. */
function appBinding(name: string, clusters: string[], app: Record<string, unknown>): AnyResourceBinding {
  const b = makeBinding(name, 2, clusters.map((c) => ({ name: c, replicas: 2 })), []);
  delete b.spec!.placement;
  delete b.spec!.gracefulEvictionTasks;
  return { ...b, spec: { ...b.spec, propagateDeps: true, failover: { application: app } } };
}

type Health = "Healthy" | "Unhealthy" | "Unknown";

/** What the binding controller writes once the Works report. */
const report = (store: ObjectStore, name: string, health: Record<string, Health>, status: Parameters<typeof reportStatus>[4] = {}) => reportStatus(store, name, health, true, status);

const get = (store: ObjectStore, name: string) => store.mustGet<AnyResourceBinding>(rbRef(name));

test("an application Unhealthy past its toleration is evicted with reason ApplicationFailure, its preserved state and an event", async () => {
  const env = await setup();
  try {
    const rules = [{ aliasLabelName: "failover.karmada.io/replicas", jsonPath: "{ .replicas }" }];
    await env.store.create(appBinding("nginx", ["member1"], { decisionConditions: { tolerationSeconds: 1 }, purgeMode: "Directly", statePreservation: { rules } }));
    await report(env.store, "nginx", { member1: "Unhealthy" }, { member1: { replicas: 2, readyReplicas: 0 } });
    const t0 = Date.now();
    const rb = await eventually(async () => {
      const b = await get(env.store, "nginx");
      return b.spec?.gracefulEvictionTasks?.length ? b : undefined;
    }, { timeoutMs: 8000 });
    const ms = Date.now() - t0;
    assert.ok(ms >= 900, `evicted after ${ms} ms (toleration 1 s)`);
    assert.deepEqual(rb.spec?.clusters, []);
    const [t] = rb.spec!.gracefulEvictionTasks!;
    assert.equal(t!.fromCluster, "member1");
    assert.equal(t!.reason, "ApplicationFailure");
    assert.equal(t!.producer, "resource-binding-application-failover-controller");
    assert.equal(t!.purgeMode, "Directly");
    assert.equal(t!.replicas, 2);
    assert.deepEqual(t!.preservedLabelState, { "failover.karmada.io/replicas": "2" });
    assert.deepEqual(t!.clustersBeforeFailover, ["member1"]);
    assert.ok(t!.creationTimestamp);
    assert.equal(rb.metadata.annotations?.[UnhealthySinceAnnotation], undefined, "the evicted cluster is forgotten");
    const ev = await eventually(async () => (await listEventsFor(env.store, rb)).find((e) => e.reason === "EvictWorkloadFromClusterSucceed"));
    assert.match(ev.message, /member1.*unhealthy.*purgeMode Directly/);
  } finally {
    await env.close();
  }
});

test("the toleration is recorded on the binding, survives a restart of the service, and Healthy resets it", async (t) => {
  const env = await setup();
  try {
    await env.store.create(appBinding("web", ["member1", "member2"], { decisionConditions: { tolerationSeconds: 3 }, purgeMode: "Gracefully", gracePeriodSeconds: 30 }));
    await report(env.store, "web", { member1: "Unhealthy", member2: "Healthy" });
    const recorded = await eventually(async () => (await get(env.store, "web")).metadata.annotations?.[UnhealthySinceAnnotation]);
    assert.deepEqual(Object.keys(JSON.parse(recorded)), ["member1"]);

    // Healthy again: forgotten
    await report(env.store, "web", { member1: "Healthy", member2: "Healthy" });
    await eventually(async () => (await get(env.store, "web")).metadata.annotations?.[UnhealthySinceAnnotation] === undefined);

    // Unhealthy again, then the service restarts mid-toleration: the clock is not restarted
    await report(env.store, "web", { member1: "Unhealthy", member2: "Healthy" });
    const second = await eventually(async () => (await get(env.store, "web")).metadata.annotations?.[UnhealthySinceAnnotation]);
    const since = Date.parse(JSON.parse(second).member1);
    await env.app.stop();
    await sleep(1000);
    // a new instance without wake-ups: its start-up resync and a durable timer bring the eviction
    const again = buildApp({ store: env.store, sql: env.db.sql, log: silentLogger(), cfg: env.cfg, runtime: { timerPollMs: 50 } });
    await again.start();
    t.after(() => again.stop());
    const rb = await eventually(async () => {
      const b = await get(env.store, "web");
      return b.spec?.gracefulEvictionTasks?.length ? b : undefined;
    }, { timeoutMs: 8000 });
    const at = Date.now();
    assert.ok(at - since < 5500, `evicted ${at - since} ms after first seen Unhealthy (toleration 3 s, restart in between)`);
    assert.deepEqual(rb.spec?.clusters, [{ name: "member2", replicas: 2 }]);
    assert.equal(rb.spec!.gracefulEvictionTasks![0]!.gracePeriodSeconds, 30);
    assert.equal(rb.spec!.gracefulEvictionTasks![0]!.purgeMode, "Gracefully");
  } finally {
    await env.close();
  }
});

test("Unknown keeps the clock running; a binding without failover.application is never touched", async () => {
  const env = await setup();
  try {
    await env.store.create(appBinding("api", ["member1"], { decisionConditions: { tolerationSeconds: 2 }, purgeMode: "Never" }));
    const plain = appBinding("plain", ["member1"], {});
    delete plain.spec!.failover;
    await env.store.create(plain);
    await report(env.store, "plain", { member1: "Unhealthy" });
    await report(env.store, "api", { member1: "Unhealthy" });
    await eventually(async () => (await get(env.store, "api")).metadata.annotations?.[UnhealthySinceAnnotation]);
    await report(env.store, "api", { member1: "Unknown" });
    await sleep(2500);
    assert.equal((await get(env.store, "api")).spec?.gracefulEvictionTasks, undefined, "not evicted while Unknown");
    await report(env.store, "api", { member1: "Unhealthy" });
    const rb = await eventually(async () => {
      const b = await get(env.store, "api");
      return b.spec?.gracefulEvictionTasks?.length ? b : undefined;
    }, { timeoutMs: 2000 });
    assert.equal(rb.spec!.gracefulEvictionTasks![0]!.suppressDeletion, true, "Never: the old copy stays");
    const p = await get(env.store, "plain");
    assert.equal(p.spec?.gracefulEvictionTasks, undefined);
    assert.equal(p.metadata.annotations, undefined);
  } finally {
    await env.close();
  }
});

test("preserved state that cannot be read yet: a warning, no eviction, and the eviction once the status arrives", async () => {
  const env = await setup();
  try {
    const rules = [{ aliasLabelName: "checkpoint", jsonPath: "{ .checkpoint }" }];
    await env.store.create(appBinding("job", ["member1"], { decisionConditions: { tolerationSeconds: 1 }, purgeMode: "Directly", statePreservation: { rules } }));
    await report(env.store, "job", { member1: "Unhealthy" });
    const b = await get(env.store, "job");
    const warn = await eventually(async () => (await listEventsFor(env.store, b)).find((e) => e.reason === "EvictWorkloadFromClusterFailed"), { timeoutMs: 8000 });
    assert.match(warn.message, /not yet been collected from Cluster\(member1\)/);
    assert.equal((await get(env.store, "job")).spec?.gracefulEvictionTasks, undefined);
    await report(env.store, "job", { member1: "Unhealthy" }, { member1: { checkpoint: "c-9" } });
    const rb = await eventually(async () => {
      const x = await get(env.store, "job");
      return x.spec?.gracefulEvictionTasks?.length ? x : undefined;
    }, { timeoutMs: 5000 });
    assert.deepEqual(rb.spec!.gracefulEvictionTasks![0]!.preservedLabelState, { checkpoint: "c-9" });
  } finally {
    await env.close();
  }
});
