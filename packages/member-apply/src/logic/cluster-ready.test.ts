import { test } from "node:test";
import assert from "node:assert/strict";
import type { Condition } from "@flotilla/api";
import { ReadyThresholds, generateReadyCondition } from "./cluster-ready.js";

test("an unreachable member is False/ClusterNotReachable, an unhealthy one False/ClusterNotReady, a healthy one True/ClusterReady", () => {
  assert.deepEqual([generateReadyCondition(false, false), generateReadyCondition(true, false), generateReadyCondition(true, true)].map((c) => [c.status, c.reason]), [
    ["False", "ClusterNotReachable"],
    ["False", "ClusterNotReady"],
    ["True", "ClusterReady"],
  ]);
});

const T = "True";
const F = "False";
const cond = (status: string): Condition[] => [{ type: "Ready", status, reason: status === T ? "ClusterReady" : "ClusterNotReachable" }];

/** Each step: at time t (ms) the probe observes `observed` while the cluster shows `current`; the published status is `want`. */
const scenarios: { name: string; steps: [t: number, current: string | undefined, observed: string, want: string][] }[] = [
  {
    name: "the first observation is published at once",
    steps: [[0, T, F, F]],
  },
  {
    name: "a cluster without a Ready condition gets the observed one at once",
    steps: [[0, T, T, T], [100, undefined, F, F]],
  },
  {
    name: "a failure shorter than the failure threshold keeps Ready True",
    steps: [[0, T, T, T], [1000, T, F, T], [20_000, T, F, T], [29_999, T, F, T], [31_000, T, T, T]],
  },
  {
    name: "a failure that lasts the failure threshold flips Ready to False",
    steps: [[0, T, T, T], [1000, T, F, T], [30_999, T, F, T], [31_000, T, F, F]],
  },
  {
    name: "a recovery is published only after the success threshold",
    steps: [[0, F, F, F], [1000, F, T, F], [30_000, F, T, F], [31_000, F, T, T]],
  },
  {
    name: "a flapping member restarts the threshold on every change",
    steps: [[0, T, T, T], [1000, T, F, T], [20_000, T, T, T], [25_000, T, F, T], [50_000, T, F, T], [55_000, T, F, F]],
  },
  {
    name: "False to False (unreachable to unhealthy) needs no threshold",
    steps: [[0, F, F, F], [1000, F, F, F]],
  },
];

for (const s of scenarios) {
  test(`threshold smoothing: ${s.name}`, () => {
    const th = new ReadyThresholds({ successThresholdMs: 30_000, failureThresholdMs: 30_000 });
    for (const [t, current, observed, want] of s.steps) {
      const got = th.adjust("m1", current === undefined ? [] : cond(current), { type: "Ready", status: observed }, t);
      assert.equal(got.status, want, `at ${t} ms (current ${current}, observed ${observed})`);
    }
  });
}

test("a pending flip reports how long until it is published", () => {
  const th = new ReadyThresholds({ successThresholdMs: 5000, failureThresholdMs: 3000 });
  th.adjust("m1", cond(T), { type: "Ready", status: T }, 0);
  th.adjust("m1", cond(T), { type: "Ready", status: F }, 1000);
  assert.equal(th.pendingFlipMs("m1", cond(T), 2500), 1500);
  assert.equal(th.pendingFlipMs("m1", cond(F), 2500), undefined);
});

test("a member taken over from another process goes on being smoothed from its published condition, not flipped at once", () => {
  const fresh = new ReadyThresholds({ successThresholdMs: 5000, failureThresholdMs: 3000 });
  // seen for the first time: the observation is published as it is (Karmada's start)
  assert.equal(fresh.adjust("m1", cond(T), { type: "Ready", status: F }, 0).status, F);

  const taken = new ReadyThresholds({ successThresholdMs: 5000, failureThresholdMs: 3000 });
  taken.continueFrom("m1", cond(T));
  assert.equal(taken.adjust("m1", cond(T), { type: "Ready", status: F }, 0).status, T);
  assert.equal(taken.adjust("m1", cond(T), { type: "Ready", status: F }, 2999).status, T);
  assert.equal(taken.adjust("m1", cond(T), { type: "Ready", status: F }, 3000).status, F);
  // nothing published yet: nothing to continue from
  const none = new ReadyThresholds({ successThresholdMs: 5000, failureThresholdMs: 3000 });
  none.continueFrom("m1", undefined);
  assert.equal(none.adjust("m1", undefined, { type: "Ready", status: F }, 0).status, F);
});
