import { test } from "node:test";
import assert from "node:assert/strict";
import type { AggregatedStatusItem, ResourceBindingSpec } from "@flotilla/api";

type JsonObject = NonNullable<AggregatedStatusItem["status"]>;
import { decideApplicationFailover, formatUnhealthySince, parseUnhealthySince, type FailoverInput } from "./application-failover.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const s = (n: number) => T0 + n * 1000;
const item = (clusterName: string, health: string, status?: JsonObject): AggregatedStatusItem => ({ clusterName, applied: true, health, ...(status ? { status } : {}) });
const spec = (app: NonNullable<ResourceBindingSpec["failover"]>["application"], clusters = ["member1", "member2"], extra: Partial<ResourceBindingSpec> = {}): ResourceBindingSpec => ({
  replicas: 2,
  clusters: clusters.map((name) => ({ name, replicas: 1 })),
  failover: { application: app },
  ...extra,
});
const app = (o: Record<string, unknown> = {}) => ({ decisionConditions: { tolerationSeconds: 10 }, purgeMode: "Gracefully", gracePeriodSeconds: 600, ...o });
const input = (o: Partial<FailoverInput>): FailoverInput => ({ spec: spec(app()), status: { aggregatedStatus: [item("member1", "Healthy"), item("member2", "Healthy")] }, since: {}, statefulInjection: true, producer: "p", now: s(0), ...o });

test("without failover.application the controller is inactive and forgets what it recorded", () => {
  const d = decideApplicationFailover(input({ spec: { clusters: [{ name: "member1" }] }, since: { member1: s(0) } }));
  assert.deepEqual(d, { active: false, evict: [], failed: [], since: {}, retryMs: undefined });
});

test("without any aggregated status the controller is inactive", () => {
  assert.equal(decideApplicationFailover(input({ status: {} })).active, false);
});

test("all clusters healthy: nothing recorded, nothing to wait for", () => {
  const d = decideApplicationFailover(input({}));
  assert.deepEqual([d.evict, d.since, d.retryMs], [[], {}, undefined]);
});

test("a cluster first seen Unhealthy starts its toleration and comes back just after it ends", () => {
  const d = decideApplicationFailover(input({ status: { aggregatedStatus: [item("member1", "Unhealthy"), item("member2", "Healthy")] }, now: s(5) }));
  assert.deepEqual(d.since, { member1: s(5) });
  assert.deepEqual(d.evict, []);
  assert.equal(d.retryMs, 10_001);
});

test("still Unhealthy within the toleration: wait for what is left", () => {
  const d = decideApplicationFailover(input({ status: { aggregatedStatus: [item("member1", "Unhealthy")] }, since: { member1: s(0) }, now: s(4) }));
  assert.deepEqual([d.evict, d.since, d.retryMs], [[], { member1: s(0) }, 6001]);
});

test("exactly at the toleration's end it is not evicted yet (upstream evicts only after it)", () => {
  const d = decideApplicationFailover(input({ status: { aggregatedStatus: [item("member1", "Unhealthy")] }, since: { member1: s(0) }, now: s(10) }));
  assert.deepEqual(d.evict, []);
  assert.equal(d.retryMs, 1);
});

test("Unhealthy past the toleration: evicted Gracefully with the grace period, reason ApplicationFailure and the producer, and forgotten", () => {
  const d = decideApplicationFailover(input({ status: { aggregatedStatus: [item("member1", "Unhealthy"), item("member2", "Healthy")] }, since: { member1: s(0) }, now: s(11), producer: "resource-binding-application-failover-controller" }));
  assert.deepEqual(d.evict, [
    {
      cluster: "member1",
      options: {
        purgeMode: "Gracefully",
        producer: "resource-binding-application-failover-controller",
        reason: "ApplicationFailure",
        message: "the application was unhealthy on cluster member1 for more than 10s",
        gracePeriodSeconds: 600,
      },
    },
  ]);
  assert.deepEqual(d.since, {});
  assert.equal(d.retryMs, undefined);
});

test("purge mode Directly carries no grace period; Never is left to the task (suppressDeletion)", () => {
  const st = { aggregatedStatus: [item("member1", "Unhealthy")] };
  const direct = decideApplicationFailover(input({ spec: spec(app({ purgeMode: "Directly", gracePeriodSeconds: undefined })), status: st, since: { member1: s(0) }, now: s(11) }));
  assert.equal(direct.evict[0]?.options.purgeMode, "Directly");
  assert.equal(direct.evict[0]?.options.gracePeriodSeconds, undefined);
  const never = decideApplicationFailover(input({ spec: spec(app({ purgeMode: "Never", gracePeriodSeconds: undefined })), status: st, since: { member1: s(0) }, now: s(11) }));
  assert.equal(never.evict[0]?.options.purgeMode, "Never");
});

test("the legacy spelling Immediately means Directly", () => {
  const d = decideApplicationFailover(input({ spec: spec(app({ purgeMode: "Immediately" })), status: { aggregatedStatus: [item("member1", "Unhealthy")] }, since: { member1: s(0) }, now: s(11) }));
  assert.equal(d.evict[0]?.options.purgeMode, "Directly");
});

test("Healthy resets the toleration", () => {
  const d = decideApplicationFailover(input({ since: { member1: s(0) }, now: s(20) }));
  assert.deepEqual([d.evict, d.since], [[], {}]);
});

test("Unknown neither starts nor resets the toleration, and the clock keeps running", () => {
  const fresh = decideApplicationFailover(input({ status: { aggregatedStatus: [item("member1", "Unknown")] }, now: s(3) }));
  assert.deepEqual([fresh.since, fresh.retryMs], [{}, undefined]);
  const running = decideApplicationFailover(input({ status: { aggregatedStatus: [item("member1", "Unknown")] }, since: { member1: s(0) }, now: s(3) }));
  assert.deepEqual([running.since, running.retryMs], [{ member1: s(0) }, 7001]);
  const back = decideApplicationFailover(input({ status: { aggregatedStatus: [item("member1", "Unhealthy")] }, since: { member1: s(0) }, now: s(12) }));
  assert.deepEqual(back.evict.map((e) => e.cluster), ["member1"], "Unhealthy again after the gap: evicted on the original clock");
});

test("a cluster no longer scheduled, or already in an eviction task, is forgotten and not evicted", () => {
  const d = decideApplicationFailover(
    input({
      spec: spec(app(), ["member2", "member3"], { gracefulEvictionTasks: [{ fromCluster: "member3" }] }),
      status: { aggregatedStatus: [item("member1", "Unhealthy"), item("member2", "Healthy"), item("member3", "Unhealthy")] },
      since: { member1: s(0), member3: s(0) },
      now: s(30),
    }),
  );
  assert.deepEqual([d.evict, d.since], [[], {}]);
});

test("tolerationSeconds 0: the first sighting only records, the next pass evicts", () => {
  const st = { aggregatedStatus: [item("member1", "Unhealthy")] };
  const first = decideApplicationFailover(input({ spec: spec(app({ decisionConditions: { tolerationSeconds: 0 } })), status: st, now: s(0) }));
  assert.deepEqual([first.evict, first.since, first.retryMs], [[], { member1: s(0) }, 1]);
  const next = decideApplicationFailover(input({ spec: spec(app({ decisionConditions: { tolerationSeconds: 0 } })), status: st, since: first.since, now: s(0) + 1 }));
  assert.deepEqual(next.evict.map((e) => e.cluster), ["member1"]);
});

test("two clusters unhealthy: each on its own clock, the sooner one decides the retry", () => {
  const d = decideApplicationFailover(input({ status: { aggregatedStatus: [item("member1", "Unhealthy"), item("member2", "Unhealthy")] }, since: { member1: s(0) }, now: s(8) }));
  assert.deepEqual(d.since, { member1: s(0), member2: s(8) });
  assert.equal(d.retryMs, 2001);
});

test("statePreservation: the rules' values from the cluster's status go into the task with the clusters before the failover", () => {
  const rules = [
    { aliasLabelName: "failover.karmada.io/replicas", jsonPath: "{ .replicas }" },
    { aliasLabelName: "failover.karmada.io/checkpoint", jsonPath: "{ .checkpoint.id }" },
  ];
  const d = decideApplicationFailover(
    input({
      spec: spec(app({ purgeMode: "Directly", gracePeriodSeconds: undefined, statePreservation: { rules } })),
      status: { aggregatedStatus: [item("member1", "Unhealthy", { replicas: 1, checkpoint: { id: "chk-7" } }), item("member2", "Healthy")] },
      since: { member1: s(0) },
      now: s(11),
    }),
  );
  assert.deepEqual(d.evict[0]?.options.preservedLabelState, { "failover.karmada.io/replicas": "1", "failover.karmada.io/checkpoint": "chk-7" });
  assert.deepEqual(d.evict[0]?.options.clustersBeforeFailover, ["member1", "member2"]);
});

test("statePreservation with the injection gate off carries nothing", () => {
  const rules = [{ aliasLabelName: "a", jsonPath: "{ .replicas }" }];
  const d = decideApplicationFailover(
    input({ spec: spec(app({ statePreservation: { rules } })), status: { aggregatedStatus: [item("member1", "Unhealthy", { replicas: 1 })] }, since: { member1: s(0) }, now: s(11), statefulInjection: false }),
  );
  assert.equal(d.evict[0]?.options.preservedLabelState, undefined);
});

test("statePreservation whose status was not collected or whose path does not resolve: not evicted, tried again", () => {
  const rules = [{ aliasLabelName: "a", jsonPath: "{ .checkpoint.id }" }];
  const noStatus = decideApplicationFailover(input({ spec: spec(app({ statePreservation: { rules } })), status: { aggregatedStatus: [item("member1", "Unhealthy")] }, since: { member1: s(0) }, now: s(11) }));
  assert.deepEqual(noStatus.evict, []);
  assert.match(noStatus.failed[0]?.message ?? "", /has not yet been collected from Cluster\(member1\)/);
  assert.deepEqual(noStatus.since, { member1: s(0) }, "the clock is kept");
  assert.equal(noStatus.retryMs, 10_000);
  const badPath = decideApplicationFailover(input({ spec: spec(app({ statePreservation: { rules } })), status: { aggregatedStatus: [item("member1", "Unhealthy", { replicas: 1 })] }, since: { member1: s(0) }, now: s(11) }));
  assert.match(badPath.failed[0]?.message ?? "", /checkpoint is not found/);
});

test("the record round-trips through the annotation, and garbage reads as nothing", () => {
  const v = formatUnhealthySince({ member2: s(1), member1: s(0) });
  assert.equal(v, '{"member1":"2026-01-01T00:00:00.000Z","member2":"2026-01-01T00:00:01.000Z"}');
  assert.deepEqual(parseUnhealthySince(v), { member1: s(0), member2: s(1) });
  assert.equal(formatUnhealthySince({}), undefined);
  assert.deepEqual(parseUnhealthySince("not json"), {});
  assert.deepEqual(parseUnhealthySince('{"member1":"yesterday"}'), {});
});
