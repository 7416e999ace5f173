// Cluster resource modeling end to end: member1 (Push, through the execution service) and member3
// (Pull, through flotilla-agent) get spec.resourceModels; each reports its nodes per grade in
// status.resourceSummary.allocatableModelings, and the scheduler's estimate follows the grades
// instead of the summed resourceSummary. member1 has two 4-CPU nodes, member3 one 4-CPU node and
// four 1-CPU nodes: 8 CPU each, 8 one-CPU replicas each by the summary; by the models 4 and 2
// (a 4-CPU node is in the grade that starts at 2 CPU, a 1-CPU node in the one that starts at 0).
// Simulations show each estimate move; a Deployment of 10 divided by available replicas, 4/2/4
// without the models, goes 4/4/2 with them. Gateway, binding, scheduler, execution as processes,
// the agent in this one.
// Needs the builds: npx tsc -b services/gateway services/execution services/binding services/scheduler services/taint-manager services/eviction
import { test } from "node:test";
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import { parseQuantity, quantityMilliValue } from "@flotilla/api";
import { eventually } from "@flotilla/testkit";
import { startPullAgent } from "../agent/pull-agent.js";
import { CLUSTER, RB, clustersOf, startStack, type Obj, type Stack } from "../failover/harness.js";
import { bearer } from "../../load/lib/stack.js";

const MAX = "9223372036854775807";
/** cpu [0,2) [2,8) [8,∞), memory [0,4Gi) [4Gi,16Gi) [16Gi,∞) */
const MODELS = [
  { grade: 0, ranges: [{ name: "cpu", min: "0", max: "2" }, { name: "memory", min: "0", max: "4Gi" }] },
  { grade: 1, ranges: [{ name: "cpu", min: "2", max: "8" }, { name: "memory", min: "4Gi", max: "16Gi" }] },
  { grade: 2, ranges: [{ name: "cpu", min: "8", max: MAX }, { name: "memory", min: "16Gi", max: MAX }] },
];

const placement = {
  clusterAffinity: { clusterNames: ["member1", "member2", "member3"] },
  replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { dynamicWeight: "AvailableReplicas" } },
};
const policy = {
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { name: "web-propagation", namespace: "default" },
  spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web" }], placement },
};
const REQUEST = { cpu: "1", memory: "512Mi" };
const web = (replicas: number): Obj => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default", labels: { app: "web" } } as Obj["metadata"],
  spec: {
    replicas,
    selector: { matchLabels: { app: "web" } },
    template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx", resources: { requests: REQUEST } }] } },
  },
});

const milli = (q: unknown) => (typeof q === "string" ? quantityMilliValue(parseQuantity(q)) : -1);
const summary = async (s: Stack, name: string) => (await s.get(CLUSTER(name)))?.status?.resourceSummary;

async function patch(s: Stack, path: string, body: unknown): Promise<Obj> {
  const r = await fetch(`${s.gw}${path}`, { method: "PATCH", headers: { "content-type": "application/merge-patch+json", ...bearer(s.token) }, body: JSON.stringify(body) });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  return JSON.parse(text) as Obj;
}

/** Where the scheduler would put web with this many replicas now (nothing written). */
async function simulate(s: Stack, replicas: number): Promise<Record<string, number>> {
  const binding = {
    metadata: { name: "web-deployment", namespace: "default" },
    spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "web" }, replicas, replicaRequirements: { resourceRequest: REQUEST }, placement },
  };
  const r = await fetch(`${s.gw}/apis/scheduling.flotilla.io/v1alpha1/simulations`, {
    method: "POST",
    headers: { "content-type": "application/json", ...bearer(s.token) },
    body: JSON.stringify({ apiVersion: "scheduling.flotilla.io/v1alpha1", kind: "Simulation", metadata: { name: "web" }, spec: { binding } }),
  });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  return Object.fromEntries((JSON.parse(text) as Obj).status!.clusters.map((c: { name: string; replicas: number }) => [c.name, c.replicas]));
}

test("a Push and a Pull member report their nodes per resource-model grade, and the scheduler divides by them", async (t) => {
  const s = await startStack();
  t.after(() => s.close());
  try {
    const agent = await startPullAgent(s);
    t.after(() => agent.stop());
    s.sim.cluster("member1").setNodes([{ name: "node", cpu: "4", memory: "8Gi", pods: 110, count: 2 }]);
    s.sim.cluster("member2").setNodes([{ name: "node-1", cpu: "4", memory: "8Gi", pods: 110 }]);
    s.sim.cluster("member3").setNodes([
      { name: "node-1", cpu: "4", memory: "8Gi", pods: 110 },
      { name: "small", cpu: "1", memory: "2Gi", pods: 110, count: 4 },
    ]);
    const cpu = { member1: 8000, member2: 4000, member3: 8000 };
    await eventually(async () => {
      for (const [name, m] of Object.entries(cpu)) if (milli((await summary(s, name))?.allocatable?.cpu) !== m) return false;
      return true;
    }, { timeoutMs: 20_000, message: `members report CPU ${JSON.stringify(cpu)}` });
    for (const name of ["member1", "member3"]) assert.equal((await summary(s, name))?.allocatableModelings, undefined, `${name} reports no modelings without models`);

    // by the summaries: 8, 4 and 8 replicas of one CPU (a simulation of exactly that many shows each member's estimate)
    assert.deepEqual(await simulate(s, 20), { member1: 8, member2: 4, member3: 8 });
    assert.deepEqual(await simulate(s, 10), { member1: 4, member2: 2, member3: 4 });

    // the models, posted out of order with the first minimum and the last maximum left loose: stored standardized
    const loose = structuredClone(MODELS).reverse();
    loose[0]!.ranges.forEach((r) => (r.max = "64"));
    loose[2]!.ranges[0]!.min = "1";
    const want = {
      // two 4-CPU nodes: grade 1 each
      member1: [{ grade: 0, count: 0 }, { grade: 1, count: 2 }, { grade: 2, count: 0 }],
      // the 4-CPU node: grade 1; the four 1-CPU nodes: grade 0
      member3: [{ grade: 0, count: 4 }, { grade: 1, count: 1 }, { grade: 2, count: 0 }],
    };
    const reported = async (name: "member1" | "member3", message: string) => {
      let seen: unknown;
      await eventually(async () => isDeepStrictEqual((seen = (await summary(s, name))?.allocatableModelings), want[name]), { timeoutMs: 20_000, message }).catch((e: Error) => {
        throw new Error(`${e.message}; last seen ${JSON.stringify(seen)}`);
      });
    };

    // member1 (Push): the execution service reports its grades; its estimate drops from 8 to 4
    // (2 per grade-1 node), below what the execution service's node-level estimator answers (8)
    assert.deepEqual((await patch(s, CLUSTER("member1"), { spec: { resourceModels: loose } })).spec?.resourceModels, MODELS);
    await reported("member1", "member1 (Push, execution) reports its nodes per grade");
    assert.deepEqual(await simulate(s, 16), { member1: 4, member2: 4, member3: 8 });

    // member3 (Pull): the agent reports its grades; its estimate drops from 8 to 2 (its grade-0 nodes fit nothing)
    assert.deepEqual((await patch(s, CLUSTER("member3"), { spec: { resourceModels: loose } })).spec?.resourceModels, MODELS);
    await reported("member3", "member3 (Pull, agent) reports its nodes per grade");
    assert.equal((await summary(s, "member2"))?.allocatableModelings, undefined, "member2 has no models and reports none");
    assert.deepEqual(await simulate(s, 10), { member1: 4, member2: 4, member3: 2 });

    await s.post("/apis/apps/v1/namespaces/default/deployments", web(10));
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", policy);
    const b = await eventually(async () => {
      const rb = await s.get(RB("web-deployment"));
      return rb && Object.keys(clustersOf(rb)).length > 0 ? rb : undefined;
    }, { timeoutMs: 30_000, message: "web scheduled" });
    assert.deepEqual(clustersOf(b), { member1: 4, member2: 4, member3: 2 });
    const running = (name: string) => (s.sim.cluster(name).get("apps/v1", "Deployment", "web", "default") as Obj | undefined)?.status?.readyReplicas;
    await eventually(() => running("member1") === 4 && running("member2") === 4 && running("member3") === 2, { timeoutMs: 30_000, message: "web 4/4/2 running" });

    // the models removed from the Push member: its counts go with them
    await patch(s, CLUSTER("member1"), { spec: { resourceModels: null } });
    await eventually(async () => (await summary(s, "member1"))?.allocatableModelings === undefined, { timeoutMs: 20_000, message: "member1's modelings dropped with its models" });
  } catch (e) {
    console.error(s.logs().slice(-30_000));
    throw e;
  }
});
