import { SCHEDULER_IDENTITY } from "@flotilla/auth";
import { test } from "node:test";
import assert from "node:assert/strict";
import { EstimatorClient } from "@flotilla/proto/grpc";
import { eventually } from "@flotilla/testkit";
import { condition, deployment, harness } from "../int.test-support.js";

test("the estimator answers each member's free replicas for a known node layout, over gRPC, within the deadline", async (t) => {
  const h = await harness(t, {
    clusters: [
      {
        name: "member1",
        nodes: [
          { name: "a", cpu: "4", memory: "8Gi", pods: 20, labels: { disk: "ssd" } },
          { name: "b", cpu: "2", memory: "4Gi", pods: 3, labels: { disk: "hdd" } },
          { name: "c", cpu: "8", memory: "16Gi", pods: 110, unschedulable: true },
        ],
      },
      { name: "member2", nodes: [{ name: "x", cpu: "1", memory: "2Gi", pods: 110 }] },
      { name: "member3" },
    ],
    readyDelayMs: 20,
    settings: { ESTIMATOR_SNAPSHOT_MAX_AGE: 1 },
  });
  // one pod of 1 cpu / 1Gi lands on node a (the emptiest)
  h.sim.cluster("member1").create(deployment("busy", 1, { cpu: "1", memory: "1Gi" }) as never);
  await eventually(() => h.sim.cluster("member1").list("v1", "Pod").some((p) => (p.spec as { nodeName?: string })?.nodeName === "a"));
  for (const m of ["member1", "member2"]) await h.join(m);
  await eventually(async () => condition(await h.getCluster("member1"), "Ready")?.status === "True" && condition(await h.getCluster("member2"), "Ready")?.status === "True", { timeoutMs: 10_000 });

  // as the scheduler calls it: TLS, and the scheduler's own service account token
  const raw = new EstimatorClient(h.estimatorAddress, { deadlineMs: 2000, credentials: h.grpc.caller(h.store, SCHEDULER_IDENTITY) });
  t.after(() => raw.close());
  // every answer says how old its snapshot is; the assertions below compare the rest
  const client = {
    async maxAvailableReplicas(...args: Parameters<EstimatorClient["maxAvailableReplicas"]>) {
      const res = await raw.maxAvailableReplicas(...args);
      for (const r of res) if (r.maxReplicas >= 0) assert.ok(r.snapshotAgeMs !== undefined && r.snapshotAgeMs >= 0 && r.snapshotAgeMs < 60_000, `snapshot age of ${r.name}: ${r.snapshotAgeMs}`);
      return res.map(({ snapshotAgeMs: _a, ...r }) => r);
    },
  };

  // a: min(3000m/500m, 7Gi/1Gi, 19 slots) = 6; b: min(4, 4, 3 slots) = 3; c is cordoned
  const half = { resourceRequest: { cpu: "500m", memory: "1Gi" } };
  assert.deepEqual(await client.maxAvailableReplicas(["member1", "member2", "member3", "nope"], half), [
    { name: "member1", maxReplicas: 9 },
    { name: "member2", maxReplicas: 2 },
    { name: "member3", maxReplicas: -1, error: "cluster not found" },
    { name: "nope", maxReplicas: -1, error: "cluster not found" },
  ]);
  // node selector: only b
  assert.deepEqual(await client.maxAvailableReplicas(["member1"], { ...half, nodeClaim: { nodeSelector: { disk: "hdd" } } }), [{ name: "member1", maxReplicas: 3 }]);
  // required node affinity: NotIn hdd → only a (c is still cordoned)
  assert.deepEqual(
    await client.maxAvailableReplicas(["member1"], { ...half, nodeClaim: { hardNodeAffinity: { nodeSelectorTerms: [{ matchExpressions: [{ key: "disk", operator: "NotIn", values: ["hdd"] }] }] } } }),
    [{ name: "member1", maxReplicas: 6 }],
  );
  // tolerating the cordon adds c: 8000m/500m = 16, 16Gi/1Gi = 16
  assert.deepEqual(await client.maxAvailableReplicas(["member1"], { ...half, nodeClaim: { tolerations: [{ key: "node.kubernetes.io/unschedulable", operator: "Exists", effect: "NoSchedule" }] } }), [{ name: "member1", maxReplicas: 25 }]);
  // a resource no node has → 0; no request at all → free pod slots (19 + 3)
  assert.deepEqual(await client.maxAvailableReplicas(["member1"], { resourceRequest: { "nvidia.com/gpu": "1" } }), [{ name: "member1", maxReplicas: 0 }]);
  assert.deepEqual(await client.maxAvailableReplicas(["member1"], {}), [{ name: "member1", maxReplicas: 22 }]);
  // an empty list means every joined cluster
  assert.deepEqual((await client.maxAvailableReplicas([], half)).map((c) => c.name), ["member1", "member2"]);

  // a slow member does not hold the answer past the caller's deadline: its last snapshot answers
  // (a deadline far below the member's latency, yet not so short that a loaded test machine misses it)
  await h.sim.setFault("member2", { mode: "slow", latencyMs: 6000 });
  const t0 = Date.now();
  const slow = await client.maxAvailableReplicas(["member1", "member2"], half, { deadlineMs: 1500 });
  const took = Date.now() - t0;
  assert.ok(took < 1500, `answered in ${took} ms`);
  assert.deepEqual(slow, [
    { name: "member1", maxReplicas: 9 },
    { name: "member2", maxReplicas: 2 },
  ]);
});
