// The `flotilla` binary against the whole stack (the failover harness: the seed's three simulated
// members, every service from its build): `get deploy -A -C member1,member2` through the cluster
// proxy with the CLUSTER column, pods, clusters, cordon/uncordon, describe binding, explain, simulate and simulate-failure, register, top clusters,
// a member that is down, and join/unjoin of a fourth member from its kubeconfig.
// Needs the builds: npm run build
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { eventually } from "@flotilla/testkit";
import { CLUSTER, RB, clustersOf, dividedPolicy, nginx, ready, root, startStack, taints, type Obj } from "../failover/harness.js";

const BIN = path.join(root, "packages/cli/bin/flotilla.js");

/** Runs the binary as a user would (never blocking this process, which hosts the simulator). */
function flotilla(kubeconfig: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, "--kubeconfig", kubeconfig, ...args], { cwd: root, env: { ...process.env, KUBECONFIG: "" }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const kubeconfig = (server: string, token: string) =>
  ["apiVersion: v1", "kind: Config", "clusters:", "- name: c", `  cluster: {server: "${server}"}`, "users:", "- name: u", `  user: {token: "${token}"}`, "contexts:", "- name: x", "  context: {cluster: c, user: u}", "current-context: x", ""].join("\n");

/** The rows of a printed table as arrays of cells. */
const rows = (out: string) =>
  out
    .trim()
    .split("\n")
    .map((l) => l.trim().split(/\s{2,}/));

test("the flotilla CLI: members through the proxy with a CLUSTER column, cordon, describe, top, join and unjoin", async (t) => {
  const s = await startStack();
  const dir = await mkdtemp(path.join(os.tmpdir(), "flotilla-cli-"));
  t.after(async () => {
    await s.close();
    await rm(dir, { recursive: true, force: true });
  });
  const kc = path.join(dir, "kubeconfig");
  await writeFile(kc, kubeconfig(s.gw, s.token), { mode: 0o600 });
  try {
    await s.post("/apis/apps/v1/namespaces/default/deployments", nginx(3));
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", dividedPolicy);
    await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return clustersOf(b).member1 === 1 && clustersOf(b).member2 === 2;
    }, { timeoutMs: 20_000, message: "scheduled member1:1 member2:2" });
    const readyOn = (c: string) => (s.sim.cluster(c).get("apps/v1", "Deployment", "nginx", "default") as Obj | undefined)?.status?.readyReplicas;
    await eventually(() => readyOn("member1") === 1 && readyOn("member2") === 2, { timeoutMs: 20_000, message: "nginx running 1 + 2" });

    await t.test("get deploy -A -C member1,member2: one row per member with the CLUSTER column", async () => {
      const r = await flotilla(kc, "get", "deploy", "-A", "-C", "member1,member2");
      assert.equal(r.code, 0, r.stderr);
      const [head, ...body] = rows(r.stdout);
      assert.deepEqual(head, ["NAMESPACE", "NAME", "CLUSTER", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "ADOPTION"]);
      assert.deepEqual(
        body.map((x) => [x[0], x[1], x[2], x[3], x[7]]),
        [
          ["default", "nginx", "member1", "1/1", "Y"],
          ["default", "nginx", "member2", "2/2", "Y"],
        ],
      );
    });

    await t.test("get po: the seed's pods with their cluster; get deploy nginx -o yaml: the objects, each naming its cluster", async () => {
      const r = await flotilla(kc, "get", "po", "-C", "member1,member2");
      assert.equal(r.code, 0, r.stderr);
      const [head, ...body] = rows(r.stdout);
      // the members made the pods: no ADOPTION column (karmadactl get po)
      assert.deepEqual(head, ["NAME", "CLUSTER", "READY", "STATUS", "RESTARTS", "AGE"]);
      assert.deepEqual(body.map((x) => x[1]).sort(), ["member1", "member2", "member2"]);
      assert.ok(body.every((x) => x[0]!.startsWith("nginx-") && x[2] === "1/1" && x[3] === "Running"), r.stdout);
      const y = await flotilla(kc, "get", "deploy", "nginx", "-C", "member1,member2", "-o", "json");
      assert.equal(y.code, 0, y.stderr);
      const list = JSON.parse(y.stdout) as { kind: string; items: Obj[] };
      assert.equal(list.kind, "List");
      assert.deepEqual(list.items.map((o) => (o.metadata as { annotations?: Record<string, string> }).annotations?.["resource.karmada.io/cached-from-cluster"]), ["member1", "member2"]);
      const missing = await flotilla(kc, "get", "deploy", "nope", "-C", "member1,member2");
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /Error from server \(NotFound\): deployments.apps "nope" not found in cluster\(s\) member1, member2/);
    });

    await t.test("get clusters: every member Push and Ready", async () => {
      const r = await flotilla(kc, "get", "clusters");
      assert.equal(r.code, 0, r.stderr);
      const [head, ...body] = rows(r.stdout);
      assert.deepEqual(head, ["NAME", "VERSION", "MODE", "READY", "AGE"]);
      assert.deepEqual(body.map((x) => [x[0], x[2], x[3]]), [
        ["member1", "Push", "True"],
        ["member2", "Push", "True"],
        ["member3", "Push", "True"],
      ]);
    });

    await t.test("cordon puts the unschedulable NoSchedule taint on the cluster, uncordon takes it away", async () => {
      const c = await flotilla(kc, "cordon", "member1");
      assert.equal(c.code, 0, c.stderr);
      assert.equal(c.stdout, "cluster.cluster.karmada.io/member1 cordoned\n");
      assert.ok(taints(await s.get(CLUSTER("member1"))).includes("cluster.karmada.io/unschedulable:NoSchedule"));
      assert.equal((await flotilla(kc, "cordon", "member1")).stdout, "cluster.cluster.karmada.io/member1 already cordoned\n");
      const u = await flotilla(kc, "uncordon", "member1");
      assert.equal(u.stdout, "cluster.cluster.karmada.io/member1 uncordoned\n");
      assert.ok(!taints(await s.get(CLUSTER("member1"))).includes("cluster.karmada.io/unschedulable:NoSchedule"));
      const bad = await flotilla(kc, "taint", "cluster", "member1", "dedicated=gpu:Sometimes");
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /error: invalid taint effect "Sometimes"/);
      const none = await flotilla(kc, "cordon", "nope");
      assert.equal(none.code, 1);
      assert.match(none.stderr, /Error from server \(NotFound\): .*"nope" not found/);
    });

    await t.test("describe binding and top clusters", async () => {
      const d = await flotilla(kc, "describe", "binding", "default/nginx-deployment");
      assert.equal(d.code, 0, d.stderr);
      assert.match(d.stdout, /Resource: +apps\/v1 Deployment default\/nginx/);
      assert.match(d.stdout, /Placement:\n +CLUSTER +REPLICAS\n +member1 +1\n +member2 +2\n/);
      assert.match(d.stdout, /Scheduling Diagnosis:\n/);
      assert.match(d.stdout, /Feasible:/);
      const top = await flotilla(kc, "top", "clusters");
      assert.equal(top.code, 0, top.stderr);
      const [head, ...body] = rows(top.stdout);
      assert.deepEqual(head, ["NAME", "CPU(cores)", "CPU%", "MEMORY(bytes)", "MEMORY%", "PODS"]);
      assert.deepEqual(body.map((x) => x[0]), ["member1", "member2", "member3"]);
    });

    await t.test("explain: why member1 and member2 and not member3; simulate: where the policy would go with member2 failed", async () => {
      for (const args of [["explain", "deployment/nginx", "-n", "default"], ["explain", "binding", "default/nginx-deployment"]]) {
        const e = await flotilla(kc, ...args);
        assert.equal(e.code, 0, e.stderr);
        assert.match(e.stdout, /^ResourceBinding default\/nginx-deployment: Deployment default\/nginx, 3 replicas\nScheduled: True \(Success\)/);
        const table = rows(e.stdout.slice(e.stdout.indexOf("CLUSTER")));
        assert.deepEqual(table[0], ["CLUSTER", "VERDICT", "REPLICAS", "REASON"]);
        assert.deepEqual(table.slice(1).map((r) => r.slice(0, 3)), [["member1", "selected", "1"], ["member2", "selected", "2"], ["member3", "rejected", "-"]]);
        assert.match(table[3]![3]!, /^ClusterAffinity: /);
      }
      const missing = await flotilla(kc, "explain", "deploy/absent");
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /resourcebinding default\/absent-deployment not found/);

      const pf = path.join(dir, "policy.yaml");
      await writeFile(pf, JSON.stringify(dividedPolicy));
      const sim = await flotilla(kc, "simulate", "-f", pf, "--replicas", "6");
      assert.equal(sim.code, 0, sim.stderr);
      assert.match(sim.stdout, /^PropagationPolicy nginx-propagation: 6 replicas of Deployment nginx\nScheduled: True \(Success\)/);
      const placed = rows(sim.stdout.slice(sim.stdout.indexOf("CLUSTER")));
      assert.deepEqual(placed.slice(1).map((r) => r.slice(0, 3)), [["member1", "selected", "2"], ["member2", "selected", "4"], ["member3", "rejected", "-"]]);
      const failed = await flotilla(kc, "simulate", "-f", pf, "--replicas", "3", "--fail", "member2");
      assert.equal(failed.code, 0, failed.stderr);
      const after = rows(failed.stdout.slice(failed.stdout.indexOf("CLUSTER")));
      assert.deepEqual(after.slice(1).map((r) => r.slice(0, 3)), [["member1", "selected", "3"], ["member2", "rejected", "-"], ["member3", "rejected", "-"]]);
      assert.match(after[2]![3]!, /TaintToleration: .*not-ready/);
      // nothing was written: the binding is as it was
      assert.deepEqual(clustersOf(await s.get(RB("nginx-deployment"))), { member1: 1, member2: 2 });
      const bad = await flotilla(kc, "simulate", "-f", pf, "--fail", "member9");
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /--fail names clusters that do not exist: member9/);
    });

    await t.test("simulate-failure member1: the seed's nginx would move to member2:3 once its toleration runs out; nothing is written", async () => {
      const before = await s.get(RB("nginx-deployment"));
      const r = await flotilla(kc, "simulate-failure", "member1");
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^Failing member1: 1 binding\(s\) placed there\n/);
      const table = rows(r.stdout.slice(r.stdout.indexOf("BINDING"), r.stdout.indexOf("\nCapacity left:")));
      assert.deepEqual(table[0], ["BINDING", "FROM", "TO", "RESULT", "DETAIL"]);
      // the policy got the gateway's default tolerations: unreachable NoExecute for DEFAULT_UNREACHABLE_TOLERATION_SECONDS (shrunk here)
      const policy = await s.get("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies/nginx-propagation");
      const seconds = (policy?.spec?.placement?.clusterTolerations as Array<{ key: string; tolerationSeconds?: number }>).find((x) => x.key === "cluster.karmada.io/unreachable")?.tolerationSeconds;
      assert.ok(typeof seconds === "number" && seconds > 0, JSON.stringify(policy?.spec?.placement));
      assert.deepEqual(table[1], ["default/nginx-deployment", "member1:1,member2:2", "member2:3", "Rescheduled", `evicted from member1 after ${seconds}s`]);
      const capacity = rows(r.stdout.slice(r.stdout.indexOf("CLUSTER")));
      assert.deepEqual(capacity[0], ["CLUSTER", "STATE", "RECEIVES", "PODS", "CPU", "MEMORY"]);
      assert.deepEqual(capacity.slice(1).map((x) => x.slice(0, 3)), [["member1", "failed", "0"], ["member2", "up", "1"], ["member3", "up", "0"]]);
      assert.match(capacity[2]![3]!, /^\d+ -> \d+$/);

      const j = await flotilla(kc, "simulate-failure", "member1", "-o", "json");
      assert.equal(j.code, 0, j.stderr);
      const answer = JSON.parse(j.stdout) as { kind: string; status: { bindings: Array<{ name: string; after: unknown; evictions: Array<{ afterSeconds?: number }> }> } };
      assert.equal(answer.kind, "FailureSimulation");
      assert.deepEqual(answer.status.bindings.map((b) => [b.name, b.after, b.evictions[0]?.afterSeconds]), [["nginx-deployment", [{ name: "member2", replicas: 3 }], seconds]]);

      const after = await s.get(RB("nginx-deployment"));
      const rv = (o: Obj | undefined) => (o?.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
      assert.ok(rv(before));
      assert.equal(rv(after), rv(before), "the binding was not written");
      assert.deepEqual(clustersOf(after), { member1: 1, member2: 2 });
      assert.deepEqual((await s.get("/apis/cluster.karmada.io/v1alpha1/clusters/member1"))?.spec?.taints ?? [], [], "member1 was not tainted");

      const bad = await flotilla(kc, "simulate-failure", "member1", "member9");
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /spec\.clusters\[1\]: Not found: "member9"/);
    });

    await t.test("register prints a Pull member's objects; --apply (twice: idempotent) creates them and writes a token of the agent, which may not list the clusters", async () => {
      const shown = await flotilla(kc, "register", "edge1");
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, /kind: ServiceAccount\nmetadata:\n  name: flotilla-agent-edge1\n  namespace: karmada-cluster\n/);
      assert.match(shown.stdout, /# CLUSTER_NAME=edge1\n# GATEWAY_URL=/);
      assert.doesNotMatch(shown.stdout, /member3/);
      assert.equal((await s.get("/api/v1/namespaces/karmada-cluster/serviceaccounts/flotilla-agent-edge1").catch(() => undefined))?.metadata?.name, undefined, "nothing applied without --apply");
      const tf = path.join(dir, "edge1.token");
      for (let i = 0; i < 2; i++) {
        const applied = await flotilla(kc, "register", "edge1", "--apply", "--token-file", tf, "--expiration", "1h");
        assert.equal(applied.code, 0, applied.stderr);
        assert.match(applied.stdout, /^agent identity for edge1: karmada-cluster\/flotilla-agent-edge1, token in /);
      }
      const agentKc = path.join(dir, "edge1.kubeconfig");
      await writeFile(agentKc, kubeconfig(s.gw, (await readFile(tf, "utf8")).trim()), { mode: 0o600 });
      const works = await flotilla(agentKc, "--server", s.gw, "top", "clusters");
      assert.equal(works.code, 1, "the agent may not list every cluster");
      assert.match(works.stderr, /Forbidden/);
      const bad = await flotilla(kc, "register", "Edge_1");
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /error: invalid cluster name "Edge_1"/);
    });

    await t.test("a member that is down is named on stderr, the others still print, the exit code is 1", async () => {
      await s.sim.setFault("member1", { mode: "unreachable" });
      try {
        const r = await flotilla(kc, "get", "deploy", "-C", "member1,member2");
        assert.equal(r.code, 1);
        assert.match(r.stderr, /error: cluster\(member1\) is inaccessible: cluster member1 did not answer through the proxy: connection refused/);
        assert.deepEqual(rows(r.stdout).slice(1).map((x) => x[1]), ["member2"]);
      } finally {
        await s.sim.setFault("member1", { mode: "healthy" });
      }
    });

    await t.test("join a fourth member from its kubeconfig, read it through the proxy, unjoin it", async () => {
      const m4 = await s.sim.addCluster({ name: "member4", port: 0 });
      const mkc = path.join(dir, "member4.kubeconfig");
      await writeFile(mkc, kubeconfig(m4.url, m4.token), { mode: 0o600 });
      const j = await flotilla(kc, "join", "member4", "--cluster-kubeconfig", mkc, "--region", "eu-west-1");
      assert.equal(j.code, 0, j.stderr);
      assert.equal(j.stdout, "cluster(member4) is joined successfully\n");
      const c = await s.get(CLUSTER("member4"));
      assert.equal(c?.spec?.apiEndpoint, m4.url);
      assert.equal(c?.spec?.region, "eu-west-1");
      await eventually(async () => ready(await s.get(CLUSTER("member4"))) === "True", { timeoutMs: 20_000, message: "member4 Ready" });
      const ns = await flotilla(kc, "get", "ns", "-C", "member4");
      assert.equal(ns.code, 0, ns.stderr);
      assert.ok(rows(ns.stdout).some((x) => x[0] === "default" && x[1] === "member4"), ns.stdout);
      const again = await flotilla(kc, "join", "member4", "--cluster-kubeconfig", mkc);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /error: cluster member4 is already joined/);
      const u = await flotilla(kc, "unjoin", "member4");
      assert.equal(u.code, 0, u.stderr);
      assert.equal(u.stdout, "cluster(member4) is unjoined successfully\n");
      assert.equal(await s.get(CLUSTER("member4")), undefined);
      assert.equal(await s.get("/api/v1/namespaces/karmada-cluster/secrets/member4"), undefined);
    });
  } catch (e) {
    console.error(s.logs());
    throw e;
  }
});
