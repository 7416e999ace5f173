// Karmada's scale-up rule end to end: a Deployment placed 2/4/6 by dynamic weight on the
// simulator's three members, scaled to 24 once every member has the same room left, becomes
// 6/8/10: only the 12 added replicas are divided by spare capacity (4 each) and added onto the
// current placement. Gateway, binding, scheduler and execution as processes, members simulated.
// Needs the builds: npx tsc -b services/gateway services/execution services/binding services/scheduler services/taint-manager services/eviction
import { readFileSync } from "node:fs";
import { SCHEDULER_IDENTITY, ServiceAccountTokens, callerCredentials, selfIssuedToken } from "@flotilla/auth";
import { ObjectStore } from "@flotilla/store";
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseQuantity, quantityMilliValue } from "@flotilla/api";
import { EstimatorClient } from "@flotilla/proto/grpc";
import { eventually, sleep } from "@flotilla/testkit";
import { CLUSTER, DEPLOY, RB, clustersOf, startStack, type Obj, type Stack } from "../failover/harness.js";
import { bearer } from "../../load/lib/stack.js";

const MEMBERS = ["member1", "member2", "member3"];

const policy = {
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { name: "web-propagation", namespace: "default" },
  spec: {
    resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web" }],
    placement: {
      clusterAffinity: { clusterNames: MEMBERS },
      replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { dynamicWeight: "AvailableReplicas" } },
    },
  },
};

/** 100m CPU per replica: a member's room is ten replicas per CPU left. */
const web = (replicas: number): Obj => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default", labels: { app: "web" } } as Obj["metadata"],
  spec: {
    replicas,
    selector: { matchLabels: { app: "web" } },
    template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx", resources: { requests: { cpu: "100m", memory: "1Mi" } } }] } },
  },
});

const milli = (q: unknown) => (typeof q === "string" ? quantityMilliValue(parseQuantity(q)) : -1);

/** Gives each member one node of `cpu[name]` and waits until its Cluster reports that allocatable CPU. */
async function setCpu(s: Stack, cpu: Record<string, string>): Promise<void> {
  for (const [name, c] of Object.entries(cpu)) s.sim.cluster(name).setNodes([{ name: "node-1", cpu: c, memory: "64Gi", pods: 500 }]);
  await eventually(
    async () => {
      for (const [name, c] of Object.entries(cpu)) {
        const rs = (await s.get(CLUSTER(name)))?.status?.resourceSummary;
        if (milli(rs?.allocatable?.cpu) !== milli(c)) return false;
      }
      return true;
    },
    { timeoutMs: 20_000, message: `clusters report CPU ${JSON.stringify(cpu)}` },
  );
}

async function scale(s: Stack, replicas: number): Promise<void> {
  const r = await fetch(`${s.gw}${DEPLOY("web")}`, {
    method: "PATCH",
    headers: { "content-type": "application/merge-patch+json", ...bearer(s.token) },
    body: JSON.stringify({ spec: { replicas } }),
  });
  assert.equal(r.status, 200, await r.text());
}

test("a Deployment placed 2/4/6 by dynamic weight and scaled to 24 on equal spare capacity runs 6/8/10", async (t) => {
  const s = await startStack();
  t.after(() => s.close());
  try {
    // room for 10, 20 and 30 replicas: 12 replicas land 2/4/6
    await setCpu(s, { member1: "1", member2: "2", member3: "3" });
    await s.post("/apis/apps/v1/namespaces/default/deployments", web(12));
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", policy);
    const first = await eventually(async () => {
      const b = await s.get(RB("web-deployment"));
      return b && Object.keys(clustersOf(b)).length === 3 ? b : undefined;
    }, { timeoutMs: 30_000, message: "web scheduled" });
    assert.deepEqual(clustersOf(first), { member1: 2, member2: 4, member3: 6 });
    const running = (name: string) => (s.sim.cluster(name).get("apps/v1", "Deployment", "web", "default") as Obj | undefined)?.status?.readyReplicas;
    await eventually(() => running("member1") === 2 && running("member2") === 4 && running("member3") === 6, { timeoutMs: 30_000, message: "web running 2/4/6" });

    // now each member has room for exactly 500 more (its 2, 4 or 6 replicas use 0.2, 0.4, 0.6 CPU;
    // pod slots leave 498/496/494), as the estimator the scheduler asks must see before the scale-up
    await setCpu(s, { member1: "50200m", member2: "50400m", member3: "50600m" });
    // as the scheduler asks it: TLS, and a token of the scheduler's service account
    const tokens = await ServiceAccountTokens.fromFile(new ObjectStore(s.db.sql), s.services.grpcFiles.serviceAccountKey, "https://flotilla.local", { audiences: ["https://flotilla.local"], defaultSeconds: 3600, maxSeconds: 86_400 });
    const credentials = callerCredentials({ ca: readFileSync(s.services.grpcFiles.cert), token: selfIssuedToken({ store: new ObjectStore(s.db.sql), tokens, identity: SCHEDULER_IDENTITY }) });
    const estimator = new EstimatorClient(s.estimator, { deadlineMs: 3000, credentials });
    t.after(() => estimator.close());
    await eventually(async () => (await estimator.maxAvailableReplicas(MEMBERS, { resourceRequest: { cpu: "100m", memory: "1Mi" } })).every((c) => c.maxReplicas >= 490), { timeoutMs: 20_000, message: "the estimator sees the new room" });
    // the scheduler keeps an estimator answer for ESTIMATOR_CACHE_TTL (1 s)
    await sleep(1500);
    await scale(s, 24);
    const up = await eventually(async () => {
      const b = await s.get(RB("web-deployment"));
      const placed = Object.values(clustersOf(b)).reduce((a, r) => a + r, 0);
      return b?.spec?.replicas === 24 && placed === 24 ? b : undefined;
    }, { timeoutMs: 30_000, message: "web scheduled at 24" });
    assert.deepEqual(clustersOf(up), { member1: 6, member2: 8, member3: 10 }, "the 12 added replicas split 4/4/4 and added to 2/4/6");
    const scheduled = (up.status?.conditions as { type: string; status: string; reason: string }[]).find((c) => c.type === "Scheduled");
    assert.deepEqual([scheduled?.status, scheduled?.reason], ["True", "Success"]);
    await eventually(() => running("member1") === 6 && running("member2") === 8 && running("member3") === 10, { timeoutMs: 30_000, message: "web running 6/8/10" });
  } catch (e) {
    console.error(s.logs());
    throw e;
  }
});
