// member3 in Pull mode through flotilla-agent, with the whole stack running (gateway, execution,
// binding, scheduler, taint-manager, eviction as processes): the agent switches the joined
// member3 to Pull, a Duplicated policy's copy reaches member3 through the agent (the execution
// service leaves member3 alone), and once the agent stops, member3's heartbeat stops: after the
// grace period it is Unknown, tainted unreachable, and evicted from its bindings. While the agent
// runs, `flotilla get deploy -A -C member1,member2,member3` reads member3 through the cluster proxy
// and the agent's tunnel, and `flotilla get pods -A` lists the pods of all three members. Needs the builds: npm run build
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { eventually } from "@flotilla/testkit";
import { startPullAgent } from "./pull-agent.js";
import { CLUSTER, RB, WORKS, clustersOf, nginx, nginxPolicy, ready, root, startStack, taints, type Obj } from "../failover/harness.js";

/** The flotilla binary as a user runs it (never blocking this process, which hosts the simulator). */
function flotilla(kubeconfig: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(root, "packages/cli/bin/flotilla.js"), "--kubeconfig", kubeconfig, ...args], { cwd: root, env: { ...process.env, KUBECONFIG: "" }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

test("member3 in Pull mode: its copy comes through the agent, and stopping the agent fails it over", async (t) => {
  const s = await startStack();
  t.after(() => s.close());
  const m3 = s.sim.cluster("member3");
  try {
    const agent = await startPullAgent(s);
    t.after(() => agent.stop());

    await s.post("/apis/apps/v1/namespaces/default/deployments", nginx(2));
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", nginxPolicy({ clusterAffinity: { clusterNames: ["member1", "member3"] }, replicaScheduling: { replicaSchedulingType: "Duplicated" } }));
    await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return b && clustersOf(b).member1 === 2 && clustersOf(b).member3 === 2;
    }, { timeoutMs: 20_000, message: "scheduled to member1 and member3" });
    await eventually(() => (m3.get("apps/v1", "Deployment", "nginx", "default") as Obj | undefined)?.status?.readyReplicas === 2, { timeoutMs: 20_000, message: "nginx 2/2 on member3" });
    const work = await eventually(async () => {
      const [w] = await s.list(WORKS("member3"));
      const applied = (w?.status?.conditions as { type: string; status: string }[] | undefined)?.find((c) => c.type === "Applied");
      const ms = w?.status?.manifestStatuses as { health: string }[] | undefined;
      return applied?.status === "True" && ms?.[0]?.health === "Healthy" ? w : undefined;
    }, { timeoutMs: 20_000, message: "member3's Work Applied and Healthy (written by the agent)" });
    assert.ok(work.metadata.finalizers?.includes("karmada.io/execution-controller"));

    // the flotilla CLI reads member3 through the proxy and the agent's tunnel, beside the Push members
    const dir = await mkdtemp(path.join(os.tmpdir(), "flotilla-pull-cli-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const kc = path.join(dir, "kubeconfig");
    await writeFile(kc, ["apiVersion: v1", "kind: Config", "clusters:", "- name: c", `  cluster: {server: "${s.gw}"}`, "users:", "- name: u", `  user: {token: "${s.token}"}`, "contexts:", "- name: x", "  context: {cluster: c, user: u}", "current-context: x", ""].join("\n"), { mode: 0o600 });
    const got = await eventually(async () => {
      const r = await flotilla(kc, "get", "deploy", "-A", "-C", "member1,member2,member3");
      return r.code === 0 && r.stdout.includes("member3") ? r : undefined;
    }, { timeoutMs: 20_000, message: "flotilla get deploy lists member3's copy" });
    const rows = got.stdout.trim().split("\n").map((l) => l.trim().split(/\s{2,}/));
    assert.deepEqual(rows[0], ["NAMESPACE", "NAME", "CLUSTER", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "ADOPTION"]);
    assert.deepEqual(rows.slice(1).map((x) => [x[0], x[1], x[2], x[3]]), [
      ["default", "nginx", "member1", "2/2"],
      ["default", "nginx", "member3", "2/2"],
    ]);
    // the seed's `karmadactl get po`: every member's pods, member3's through its agent, each row naming its cluster
    const pods = await flotilla(kc, "get", "pods", "-A");
    assert.equal(pods.code, 0, pods.stderr);
    const podRows = pods.stdout.trim().split("\n").map((l) => l.trim().split(/\s{2,}/));
    assert.deepEqual(podRows[0]!.slice(0, 4), ["NAMESPACE", "NAME", "CLUSTER", "READY"]);
    const podsPer = (c: string) => podRows.slice(1).filter((x) => x[0] === "default" && x[1]!.startsWith("nginx-") && x[2] === c).length;
    assert.deepEqual([podsPer("member1"), podsPer("member2"), podsPer("member3")], [2, 0, 2], pods.stdout);
    const mode = await flotilla(kc, "get", "clusters");
    assert.match(mode.stdout, /member3\s+\S+\s+Pull\s+True/);

    // the agent stops: nobody writes member3's heartbeat (execution leaves Pull clusters alone)
    await agent.stop();
    const stoppedAt = Date.now();
    await eventually(async () => ready(await s.get(CLUSTER("member3"))) === "Unknown", { timeoutMs: 30_000, message: "member3 Unknown" });
    assert.ok(Date.now() - stoppedAt >= 9_000, "not before the 10 s grace period");
    await eventually(async () => taints(await s.get(CLUSTER("member3"))).includes("cluster.karmada.io/unreachable:NoExecute"), { timeoutMs: 15_000, message: "unreachable NoExecute" });
    await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return b && clustersOf(b).member3 === undefined && clustersOf(b).member1 === 2;
    }, { timeoutMs: 30_000, message: "member3 evicted from the binding" });
    // member1 (Push) stayed Ready throughout
    assert.equal(ready(await s.get(CLUSTER("member1"))), "True");
  } catch (e) {
    console.error(s.logs().slice(-30_000));
    throw e;
  }
});
