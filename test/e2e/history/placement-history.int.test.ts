// A binding's placement history against the whole stack (the failover harness: the seed's three
// simulated members, every service from its build): the seed's Divided nginx is placed on
// member1:1 member2:2, member1 fails, the taint manager evicts it and the scheduler moves the
// replicas to member2:3; a ClusterResourceBinding (a ClusterRole on member1 and member3) loses
// member1 the same way. Each change is read back over REST and with `flotilla history`, with its
// trigger, reason and writer; a user's edit through the gateway is the user's; the stack keeps at
// most PLACEMENT_HISTORY_MAX_ENTRIES per binding (the gateway's answer at once, the table once
// the active relay has pruned it); the history goes with its binding.
// Needs the builds: npm run build
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { eventually } from "@flotilla/testkit";
import { CLUSTER, RB, clustersOf, dividedPolicy, nginx, root, startStack, taints } from "../failover/harness.js";

const BIN = path.join(root, "packages/cli/bin/flotilla.js");
const CRB = (name: string) => `/apis/work.karmada.io/v1alpha2/clusterresourcebindings/${name}`;

interface Change {
  time: string;
  resourceVersion: string;
  trigger: string;
  reason?: string;
  message?: string;
  producer?: string;
  actor?: { kind: string; name: string };
  from: Array<{ name: string; replicas?: number }>;
  to: Array<{ name: string; replicas?: number }>;
}
interface History {
  apiVersion: string;
  kind: string;
  binding: { kind: string; namespace?: string; name: string; uid: string };
  items: Change[];
}

function flotilla(kubeconfig: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, "--kubeconfig", kubeconfig, ...args], { cwd: root, env: { ...process.env, KUBECONFIG: "" }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const kubeconfig = (server: string, token: string) =>
  ["apiVersion: v1", "kind: Config", "clusters:", "- name: c", `  cluster: {server: "${server}"}`, "users:", "- name: u", `  user: {token: "${token}"}`, "contexts:", "- name: x", "  context: {cluster: c, user: u, namespace: default}", "current-context: x", ""].join("\n");

const rows = (out: string) =>
  out
    .trim()
    .split("\n")
    .slice(1)
    .map((l) => l.trim().split(/\s{2,}/));
const placement = (ts: Change["to"]) => ts.map((t) => `${t.name}:${t.replicas ?? 0}`).join(",");
const summary = (c: Change) => [c.trigger, c.reason ?? "", placement(c.from), placement(c.to), c.actor ? `${c.actor.kind}/${c.actor.name}` : ""];

test("placement history: a failover's placement changes, over REST and the CLI, for a ResourceBinding and a ClusterResourceBinding", async (t) => {
  const s = await startStack({ env: { PLACEMENT_HISTORY_MAX_ENTRIES: "3" } });
  const dir = await mkdtemp(path.join(os.tmpdir(), "flotilla-history-"));
  t.after(async () => {
    await s.close();
    await rm(dir, { recursive: true, force: true });
  });
  const kc = path.join(dir, "kubeconfig");
  await writeFile(kc, kubeconfig(s.gw, s.token), { mode: 0o600 });
  const history = async (p: string) => {
    const r = await fetch(`${s.gw}${p}/history`, { headers: { authorization: `Bearer ${s.token}` } });
    return { status: r.status, body: (await r.json()) as History & { reason?: string } };
  };
  try {
    await s.post("/apis/apps/v1/namespaces/default/deployments", nginx(3));
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", dividedPolicy);
    await s.post("/apis/rbac.authorization.k8s.io/v1/clusterroles", { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "history-reader" }, rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }] });
    await s.post("/apis/policy.karmada.io/v1alpha1/clusterpropagationpolicies", {
      apiVersion: "policy.karmada.io/v1alpha1",
      kind: "ClusterPropagationPolicy",
      metadata: { name: "history-reader" },
      spec: { resourceSelectors: [{ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name: "history-reader" }], placement: { clusterAffinity: { clusterNames: ["member1", "member3"] } } },
    });
    await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return clustersOf(b).member1 === 1 && clustersOf(b).member2 === 2;
    }, { timeoutMs: 20_000, message: "scheduled member1:1 member2:2" });
    const crbName = "history-reader-clusterrole";
    await eventually(async () => Object.keys(clustersOf(await s.get(CRB(crbName)))).sort().join() === "member1,member3", { timeoutMs: 20_000, message: "the ClusterRole on member1 and member3" });
    const first = await history(RB("nginx-deployment"));
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.items.map(summary), [["placementChanged", "Success", "", "member1:1,member2:2", "Service/scheduler"]]);

    // member1 goes away: NoExecute, an eviction into a graceful-eviction task, the reschedule to member2:3
    await s.sim.setFault("member1", { mode: "unreachable" });
    await eventually(async () => taints(await s.get(CLUSTER("member1"))).includes("cluster.karmada.io/not-ready:NoExecute"), { timeoutMs: 15_000, message: "NoExecute" });
    await eventually(async () => clustersOf(await s.get(RB("nginx-deployment"))).member2 === 3, { timeoutMs: 20_000, message: "rescheduled to member2:3" });
    await eventually(async () => !("member1" in clustersOf(await s.get(CRB(crbName)))), { timeoutMs: 20_000, message: "the ClusterRole evicted from member1" });

    const rb = await history(RB("nginx-deployment"));
    assert.deepEqual([rb.body.apiVersion, rb.body.kind, rb.body.binding.kind, rb.body.binding.namespace, rb.body.binding.name], ["scheduling.flotilla.io/v1alpha1", "PlacementChangeList", "ResourceBinding", "default", "nginx-deployment"]);
    assert.deepEqual(rb.body.items.map(summary), [
      ["placementChanged", "Success", "", "member1:1,member2:2", "Service/scheduler"],
      ["eviction", "TaintUntolerated", "member1:1,member2:2", "member2:2", "Service/taint-manager"],
      ["replicasChanged", "Success", "member2:2", "member2:3", "Service/scheduler"],
    ]);
    assert.equal(rb.body.items[1]!.producer, "TaintManager");
    assert.match(rb.body.items[1]!.message ?? "", /cluster\.karmada\.io\/(not-ready|unreachable)/);
    const times = rb.body.items.map((c) => Date.parse(c.time));
    assert.ok(times.every((x, i) => i === 0 || x >= times[i - 1]!), "oldest first");
    const current = await s.get(RB("nginx-deployment"));
    assert.ok(BigInt(rb.body.items.at(-1)!.resourceVersion) <= BigInt((current!.metadata as unknown as { resourceVersion: string }).resourceVersion), "each change names the resourceVersion it made");

    const crb = await history(CRB(crbName));
    assert.equal(crb.status, 200);
    assert.equal(crb.body.binding.kind, "ClusterResourceBinding");
    const placed = crb.body.items[0]!;
    assert.deepEqual([placed.from, placed.to.map((c) => c.name).sort(), placed.actor, placed.reason], [[], ["member1", "member3"], { kind: "Service", name: "scheduler" }, "Success"]);
    const evicted = crb.body.items.find((c) => c.trigger === "eviction");
    assert.ok(evicted, JSON.stringify(crb.body.items));
    assert.deepEqual([evicted.reason, evicted.producer, evicted.actor, placement(evicted.to)], ["TaintUntolerated", "TaintManager", { kind: "Service", name: "taint-manager" }, "member3:0"]);

    await t.test("flotilla history prints the same changes, for both kinds", async () => {
      const r = await flotilla(kc, "history", "rb/nginx-deployment");
      assert.equal(r.code, 0, r.stderr);
      t.diagnostic(`flotilla history rb/nginx-deployment:\n${r.stdout}`);
      t.diagnostic(`the eviction: ${JSON.stringify(rb.body.items[1])}`);
      assert.match(r.stdout, /^ResourceBinding default\/nginx-deployment: 3 placement change\(s\)\n/);
      assert.deepEqual(
        rows(r.stdout).map((x) => x.slice(1)),
        [
          ["TRIGGER", "REASON", "FROM", "TO", "BY"],
          ["placementChanged", "Success", "-", "member1:1,member2:2", "service/scheduler"],
          ["eviction", "TaintUntolerated", "member1:1,member2:2", "member2:2", "service/taint-manager"],
          ["replicasChanged", "Success", "member2:2", "member2:3", "service/scheduler"],
        ],
      );
      const viaTemplate = await flotilla(kc, "history", "deployment/nginx", "-o", "json");
      assert.equal(viaTemplate.code, 0, viaTemplate.stderr);
      assert.deepEqual((JSON.parse(viaTemplate.stdout) as History).items.map(summary), rb.body.items.map(summary));
      const c = await flotilla(kc, "history", "crb", crbName, "-o", "wide");
      assert.equal(c.code, 0, c.stderr);
      assert.match(c.stdout, new RegExp(`^ClusterResourceBinding ${crbName}: `));
      assert.match(c.stdout, /eviction\s+TaintUntolerated\s+member[13],member[13]\s+member3\s+service\/taint-manager\s+TaintManager/);
      const missing = await flotilla(kc, "history", "rb/nope");
      assert.deepEqual([missing.code, missing.stderr], [1, "error: resourcebinding default/nope not found\n"]);
    });

    await t.test("a user's edit through the gateway is the user's; the newest PLACEMENT_HISTORY_MAX_ENTRIES are kept, then pruned", async () => {
      const r = await fetch(`${s.gw}${RB("nginx-deployment")}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${s.token}`, "content-type": "application/merge-patch+json" },
        body: JSON.stringify({ spec: { clusters: [{ name: "member2", replicas: 2 }, { name: "member3", replicas: 1 }] } }),
      });
      assert.equal(r.status, 200, await r.text());
      const h = await history(RB("nginx-deployment"));
      assert.deepEqual(h.body.items.map((c) => c.trigger), ["eviction", "replicasChanged", "update"], "the newest 3 of 4 at once");
      assert.deepEqual(summary(h.body.items[2]!), ["update", "", "member2:3", "member2:2,member3:1", "User/admin"]);
      // the active relay applies the retention every 30 s (the first time 1 s after it became active)
      const kept = async () => (await s.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM placement_history WHERE name = 'nginx-deployment'`)[0]!.n;
      await eventually(async () => (await kept()) === 3, { timeoutMs: 45_000, intervalMs: 500, message: "pruned to 3 rows" });
    });

    await t.test("bad requests are 4xx Statuses; the history goes with its binding", async () => {
      const bad = await fetch(`${s.gw}${RB("nginx-deployment")}/history?limit=x`, { headers: { authorization: `Bearer ${s.token}` } });
      const st = (await bad.json()) as { kind: string; code: number; details?: { causes?: Array<{ field: string }> } };
      assert.deepEqual([bad.status, st.kind, st.details?.causes?.[0]?.field], [422, "Status", "limit"]);
      const uid = (await history(RB("nginx-deployment"))).body.binding.uid;
      await s.del("/apis/apps/v1/namespaces/default/deployments/nginx");
      await eventually(async () => (await history(RB("nginx-deployment"))).status === 404, { timeoutMs: 20_000, message: "the binding and its history gone" });
      const gone = await history(RB("nginx-deployment"));
      assert.deepEqual([gone.body.kind, gone.body.reason], ["Status", "NotFound"]);
      const [{ n }] = await s.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM placement_history WHERE uid = ${uid}`;
      assert.equal(n, 0);
    });
  } catch (e) {
    console.error(s.logs().slice(-30_000));
    throw e;
  }
});
