// The seed's Divided walk-through (001_*) as steps on a running stack, shared by the Push-only
// test (divided.int.test.ts) and the one with member3 in Pull mode (../agent/divided-pull.int.test.ts):
// nginx with 3 replicas on member1:1 and member2:2 by static weight, member3 outside the affinity.
// member1 becomes unreachable: NoSchedule, then NoExecute, an eviction task, the reschedule to
// member2:3, member2 healthy, the task dropped, member1's Work deleting but kept while member1 is
// down; member1 back: its Deployment and Work go, member2 keeps 3 and nothing moves back. The
// control-plane Deployment never shows fewer than 3 ready replicas.
import assert from "node:assert/strict";
import { eventually } from "@flotilla/testkit";
import { CLUSTER, DEPLOY, EVENTS, RB, WORKS, clustersOf, dividedPolicy, nginx, ready, taints, tasksOf, type Obj, type Stack } from "./harness.js";

export async function dividedWalkThrough(s: Stack, diagnostic: (message: string) => void, hooks: { member1Down?: () => Promise<void> } = {}): Promise<void> {
  await s.post("/apis/apps/v1/namespaces/default/deployments", nginx(3));
  await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", dividedPolicy);
  const rb0 = await eventually(async () => {
    const b = await s.get(RB("nginx-deployment"));
    return b && clustersOf(b).member1 === 1 && clustersOf(b).member2 === 2 ? b : undefined;
  }, { timeoutMs: 20_000, message: "scheduled member1:1 member2:2" });
  assert.deepEqual(clustersOf(rb0), { member1: 1, member2: 2 });
  const tolerations = rb0.spec!.placement.clusterTolerations as { key: string; tolerationSeconds?: number }[];
  assert.ok(tolerations.some((x) => x.key === "cluster.karmada.io/unreachable" && x.tolerationSeconds === 2), "the gateway's default tolerations (shrunk to 2 s)");
  const m1 = s.sim.cluster("member1");
  const m2 = s.sim.cluster("member2");
  const replicasOn = (c: typeof m1) => (c.get("apps/v1", "Deployment", "nginx", "default") as Obj | undefined)?.spec?.replicas;
  const readyOn = (c: typeof m1) => (c.get("apps/v1", "Deployment", "nginx", "default") as Obj | undefined)?.status?.readyReplicas;
  await eventually(() => replicasOn(m1) === 1 && replicasOn(m2) === 2 && readyOn(m1) === 1 && readyOn(m2) === 2, { timeoutMs: 20_000, message: "nginx running 1 + 2" });
  await eventually(async () => (await s.get(DEPLOY("nginx")))?.status?.readyReplicas === 3, { timeoutMs: 20_000, message: "control-plane nginx 3/3" });
  // from now on the control-plane Deployment must never show fewer than 3 ready replicas
  const seen: number[] = [];
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const r = (await s.get(DEPLOY("nginx")))?.status?.readyReplicas;
      if (typeof r === "number") seen.push(r);
      await new Promise((x) => setTimeout(x, 100));
    }
  })();

  // member1 goes away
  await s.sim.setFault("member1", { mode: "unreachable" });
  const down = Date.now();
  await hooks.member1Down?.();
  await eventually(async () => taints(await s.get(CLUSTER("member1"))).includes("cluster.karmada.io/not-ready:NoSchedule"), { timeoutMs: 15_000, message: "NoSchedule" });
  const tNoSchedule = Date.now() - down;
  await eventually(async () => taints(await s.get(CLUSTER("member1"))).includes("cluster.karmada.io/not-ready:NoExecute"), { timeoutMs: 15_000, message: "NoExecute" });
  const tNoExecute = Date.now() - down;
  const evicted = await eventually(async () => {
    const b = await s.get(RB("nginx-deployment"));
    return b && tasksOf(b).includes("member1") && !("member1" in clustersOf(b)) ? b : undefined;
  }, { timeoutMs: 15_000, message: "eviction task" });
  const tEvicted = Date.now() - down;
  assert.equal((evicted.spec!.gracefulEvictionTasks as { producer: string }[])[0].producer, "TaintManager");
  const moved = await eventually(async () => {
    const b = await s.get(RB("nginx-deployment"));
    return b && clustersOf(b).member2 === 3 ? b : undefined;
  }, { timeoutMs: 15_000, message: "rescheduled to member2:3" });
  assert.deepEqual(clustersOf(moved), { member2: 3 });
  await eventually(() => readyOn(m2) === 3, { timeoutMs: 15_000, message: "member2 runs 3" });
  const dropped = await eventually(async () => {
    const b = await s.get(RB("nginx-deployment"));
    return b && tasksOf(b).length === 0 ? b : undefined;
  }, { timeoutMs: 20_000, message: "task dropped once member2 is healthy" });
  const tDropped = Date.now() - down;
  assert.deepEqual(clustersOf(dropped), { member2: 3 });
  // member1's Work is deleting but kept (finalizer) while member1 is down
  const w1 = await eventually(async () => (await s.list(WORKS("member1"))).find((w) => w.metadata.deletionTimestamp), { timeoutMs: 15_000, message: "member1's Work deleting" });
  assert.ok(w1.metadata.finalizers?.length);
  // the Events are recorded just after the writes they tell of: a read at once can miss the last one
  let reasons = new Set<string>();
  await eventually(
    async () => {
      reasons = new Set((await s.list(EVENTS())).map((e) => e.reason as string));
      return ["EvictCluster", "GracefulEvictionTaskRemoved"].every((r) => reasons.has(r));
    },
    { timeoutMs: 10_000, message: "events EvictCluster and GracefulEvictionTaskRemoved" },
  ).catch((e: Error) => {
    throw new Error(`${e.message} (have ${[...reasons].join(", ")})`);
  });

  // member1 comes back: the old Deployment and Work go, nothing moves back
  await s.sim.setFault("member1", { mode: "healthy" });
  await eventually(async () => (await s.list(WORKS("member1"))).length === 0, { timeoutMs: 20_000, message: "member1's Work gone" });
  await eventually(() => m1.get("apps/v1", "Deployment", "nginx", "default") === undefined, { timeoutMs: 10_000, message: "nginx removed from member1" });
  await eventually(async () => taints(await s.get(CLUSTER("member1"))).length === 0, { timeoutMs: 15_000, message: "member1 untainted" });
  const after = await s.get(RB("nginx-deployment"));
  assert.deepEqual(clustersOf(after), { member2: 3 });
  assert.equal(replicasOn(m2), 3);
  await eventually(async () => (await s.get(DEPLOY("nginx")))?.status?.readyReplicas === 3, { timeoutMs: 10_000, message: "control-plane nginx 3/3 at the end" });
  watching = false;
  await watcher;
  assert.ok(seen.length > 10 && Math.min(...seen) >= 3, `the control-plane Deployment never showed fewer than 3 ready (min ${Math.min(...seen)}, max ${Math.max(...seen)}, ${seen.length} samples)`);
  diagnostic(`control-plane readyReplicas during the failover: min ${Math.min(...seen)}, max ${Math.max(...seen)} over ${seen.length} samples`);
  diagnostic(`from member1 down (ms): NoSchedule ${tNoSchedule}, NoExecute ${tNoExecute}, evicted ${tEvicted}, task dropped ${tDropped}`);
}

/**
 * What the Divided walk-through leaves behind, in a form two runs can be compared by: every
 * binding (placement, eviction tasks, deleting), every Work (its member and the object it
 * carries), the Deployments each seed member runs, each member's Ready condition and taints, and
 * the control-plane nginx's ready replicas.
 */
export interface DividedEndState {
  bindings: Record<string, { clusters: Record<string, number>; tasks: string[]; deleting: boolean }>;
  works: string[];
  members: Record<string, string[]>;
  clusters: Record<string, { ready: string | undefined; taints: string[] }>;
  readyReplicas: number | undefined;
}

/** The end state of the seed's Divided walk-through on a single replica of every service (divided.int.test.ts checks it). */
export const DIVIDED_END_STATE: DividedEndState = {
  bindings: { "default/nginx-deployment": { clusters: { member2: 3 }, tasks: [], deleting: false } },
  works: ["member2: apps/v1 Deployment default/nginx"],
  members: { member1: [], member2: ["default/nginx 3/3 ready"], member3: [] },
  clusters: { member1: { ready: "True", taints: [] }, member2: { ready: "True", taints: [] }, member3: { ready: "True", taints: [] } },
  readyReplicas: 3,
};

export async function dividedEndState(s: Stack): Promise<DividedEndState> {
  const bindings: DividedEndState["bindings"] = {};
  for (const b of await s.list("/apis/work.karmada.io/v1alpha2/resourcebindings")) {
    bindings[`${b.metadata.namespace}/${b.metadata.name}`] = { clusters: clustersOf(b), tasks: tasksOf(b), deleting: !!b.metadata.deletionTimestamp };
  }
  const works: string[] = [];
  const members: DividedEndState["members"] = {};
  const clusters: DividedEndState["clusters"] = {};
  for (const m of ["member1", "member2", "member3"]) {
    for (const w of await s.list(WORKS(m))) {
      for (const x of (w.spec?.workload?.manifests ?? []) as Obj[]) {
        works.push(`${m}: ${x.apiVersion} ${x.kind} ${x.metadata.namespace}/${x.metadata.name}${w.metadata.deletionTimestamp ? " (deleting)" : ""}`);
      }
    }
    members[m] = (s.sim.cluster(m).list("apps/v1", "Deployment") as Obj[])
      .map((d) => `${d.metadata.namespace}/${d.metadata.name} ${d.status?.readyReplicas ?? 0}/${d.spec?.replicas} ready`)
      .sort();
    const c = await s.get(CLUSTER(m));
    clusters[m] = { ready: ready(c), taints: taints(c) };
  }
  return { bindings, works: works.sort(), members, clusters, readyReplicas: (await s.get(DEPLOY("nginx")))?.status?.readyReplicas };
}
