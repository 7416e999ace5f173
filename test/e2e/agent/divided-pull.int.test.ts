// The seed's Divided walk-through (../failover/divided-walkthrough.ts) with member3 in Pull mode
// through flotilla-agent, as in seed 001: it passes exactly as with member3 in Push mode. Beside
// it, a second Deployment `web` placed on member3 only keeps its copy there throughout member1's
// failure and return: member3 stays Ready and untainted, the binding keeps member3, and its Work
// stays Applied (written by the agent) and is never deleted.
// Needs the builds: npx tsc -b services/gateway services/execution services/binding services/scheduler services/taint-manager services/eviction
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually } from "@flotilla/testkit";
import { startPullAgent } from "./pull-agent.js";
import { dividedWalkThrough } from "../failover/divided-walkthrough.js";
import { CLUSTER, RB, WORKS, clustersOf, nginx, nginxPolicy, ready, startStack, taints, type Obj } from "../failover/harness.js";

const web = (): Obj => {
  const d = nginx(1);
  return { ...d, metadata: { ...d.metadata, name: "web" } };
};
const webPolicy = (() => {
  const p = nginxPolicy({ clusterAffinity: { clusterNames: ["member3"] }, replicaScheduling: { replicaSchedulingType: "Duplicated" } });
  return { ...p, metadata: { ...p.metadata, name: "web-propagation" }, spec: { ...p.spec, resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web" }] } };
})();
const applied = (w: Obj | undefined) => (w?.status?.conditions as { type: string; status: string }[] | undefined)?.find((c) => c.type === "Applied")?.status;
const webWork = async (s: Awaited<ReturnType<typeof startStack>>) => (await s.list(WORKS("member3"))).find((w) => w.metadata.name.startsWith("web-"));

test("the seed's Divided walk-through with member3 in Pull mode, and member3's own copy stays put throughout", async (t) => {
  const s = await startStack();
  t.after(() => s.close());
  try {
    const agent = await startPullAgent(s);
    t.after(() => agent.stop());
    const m3 = s.sim.cluster("member3");
    const webOnM3 = () => (m3.get("apps/v1", "Deployment", "web", "default") as Obj | undefined)?.status?.readyReplicas;

    await s.post("/apis/apps/v1/namespaces/default/deployments", web());
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", webPolicy);
    await eventually(async () => {
      const b = await s.get(RB("web-deployment"));
      return b && clustersOf(b).member3 === 1;
    }, { timeoutMs: 20_000, message: "web scheduled to member3" });
    await eventually(() => webOnM3() === 1, { timeoutMs: 20_000, message: "web 1/1 on member3" });
    await eventually(async () => applied(await webWork(s)) === "True", { timeoutMs: 20_000, message: "web's Work on member3 Applied by the agent" });

    // from now on: member3 Ready and untainted, its agent's heartbeat moving on (its status is
    // reported every 300 ms with a one-second timestamp), web bound to member3, its Work Applied
    // and not deleting
    const problems: string[] = [];
    let beat: string | undefined;
    let beatSeenAt = Date.now();
    let samples = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const [c, b, w] = await Promise.all([s.get(CLUSTER("member3")), s.get(RB("web-deployment")), webWork(s)]);
        samples++;
        const at = `sample ${samples}`;
        if (ready(c) !== "True") problems.push(`${at}: member3 Ready=${ready(c)}`);
        if (taints(c).length) problems.push(`${at}: member3 tainted ${taints(c).join(",")}`);
        if (c?.spec?.syncMode !== "Pull") problems.push(`${at}: member3 syncMode ${c?.spec?.syncMode}`);
        const b3 = (c?.status?.conditions as { type: string; lastHeartbeatTime?: string }[] | undefined)?.find((x) => x.type === "Ready")?.lastHeartbeatTime;
        if (b3 !== beat) [beat, beatSeenAt] = [b3, Date.now()];
        else if (Date.now() - beatSeenAt > 4000) problems.push(`${at}: member3's heartbeat stuck at ${beat} for ${Date.now() - beatSeenAt} ms`);
        if (JSON.stringify(clustersOf(b)) !== JSON.stringify({ member3: 1 })) problems.push(`${at}: web bound to ${JSON.stringify(clustersOf(b))}`);
        if (!w) problems.push(`${at}: web's Work missing on member3`);
        else if (w.metadata.deletionTimestamp) problems.push(`${at}: web's Work deleting`);
        else if (applied(w) !== "True") problems.push(`${at}: web's Work Applied=${applied(w)}`);
        if (webOnM3() !== 1) problems.push(`${at}: web ready on member3 ${webOnM3()}`);
        await new Promise((x) => setTimeout(x, 200));
      }
    })();
    try {
      await dividedWalkThrough(s, (m) => t.diagnostic(m));
    } finally {
      watching = false;
      await watcher;
    }
    // nginx never reached member3 (outside the Divided policy's affinity)
    assert.equal(m3.get("apps/v1", "Deployment", "nginx", "default"), undefined);
    assert.ok(samples > 20, `member3 watched throughout (${samples} samples)`);
    assert.deepEqual(problems.slice(0, 10), [], `member3 and web stayed put (${problems.length} problems over ${samples} samples)`);
    t.diagnostic(`member3 (Pull) Ready, untainted, web bound and Applied over ${samples} samples`);
  } catch (e) {
    console.error(s.logs().slice(-30_000));
    throw e;
  }
});
