// The seed's Divided walk-through (divided-walkthrough.ts) with three execution replicas sharing
// the members by lease, and the replica that owns both member1 (the one failing) and member2
// (where member1's replica must go) killed with -9 as member1 fails: the walk-through ends the
// same (the control-plane Deployment never below 3 ready included), and every member is owned by
// exactly one live replica, as the lease table and the replicas themselves say.
// Needs the builds: npx tsc -b services/gateway services/execution services/binding services/scheduler services/taint-manager services/eviction
import { test } from "node:test";
import assert from "node:assert/strict";
import os from "node:os";
import { eventually } from "@flotilla/testkit";
import { ownerOf } from "../../../services/execution/src/logic/shard.js";
import { freePort } from "../../load/lib/proc.js";
import { launchService, waitReady, type Managed } from "../../load/lib/stack.js";
import { dividedWalkThrough } from "./divided-walkthrough.js";
import { startStack } from "./harness.js";

const MEMBERS = ["member1", "member2", "member3"];
const LEASE = { MEMBER_SHARDING: "true", MEMBER_LEASE_DURATION: "3s", MEMBER_LEASE_RENEW_INTERVAL: "500ms" };

test("the seed's Divided walk-through with three execution replicas, the owner of member1 and member2 killed as member1 fails: same result, every member owned once", async (t) => {
  const s = await startStack({ env: LEASE });
  const extra = new Map<string, Managed>();
  t.after(async () => {
    await Promise.all([...extra.values()].map((p) => p.stop()));
    await s.close();
  });
  try {
    const base = s.services.envOf("execution");
    // the stack's replica is named by main.ts's default; the two more are named so that member1 and member2 hash to the first
    const first = `${os.hostname()}-${base.PORT}`;
    let i = 0;
    let names: [string, string];
    do names = [`exec-${++i}`, `exec-${++i}`];
    while (ownerOf("member1", [first, ...names]) !== names[0] || ownerOf("member2", [first, ...names]) !== names[0]);
    const ports = new Map<string, number>([[first, Number(base.PORT)]]);
    for (const name of names) {
      const port = await freePort();
      ports.set(name, port);
      extra.set(name, launchService("execution", { env: { ...base, PORT: String(port), ESTIMATOR_PORT: String(await freePort()), REPLICA_NAME: name }, logs: s.processLogs }));
    }
    await waitReady(extra.values(), names.map((n) => ports.get(n)!), 60_000);

    const holders = async () => new Map((await s.db.sql<{ member: string; holder: string | null }[]>`SELECT member, holder FROM member_leases`).map((r) => [r.member, r.holder]));
    const owned = async (name: string) => {
      const text = await (await fetch(`http://127.0.0.1:${ports.get(name)}/metrics`)).text();
      return Number(/^flotilla_execution_owned_clusters (\d+)$/m.exec(text)?.[1] ?? NaN);
    };
    /** Every member's lease held by the replica it hashes to among `live`, and the replicas' own counts adding up to one owner per member. */
    const ownedOnce = async (live: string[]) => {
      const h = await holders();
      if (!MEMBERS.every((m) => h.get(m) === ownerOf(m, live))) return false;
      const counts = await Promise.all(live.map(owned));
      return counts.reduce((a, b) => a + b, 0) === MEMBERS.length && live.every((r, k) => counts[k] === MEMBERS.filter((m) => h.get(m) === r).length);
    };
    const all = [first, ...names];
    await eventually(() => ownedOnce(all), { timeoutMs: 20_000, intervalMs: 200, message: "members spread over the three replicas" });
    const before = await holders();
    t.diagnostic(`leases before: ${MEMBERS.map((m) => `${m}→${before.get(m)}`).join(", ")}`);
    assert.equal(before.get("member1"), names[0]);
    assert.equal(before.get("member2"), names[0]);

    let killedAt = 0;
    await dividedWalkThrough(s, (m) => t.diagnostic(m), {
      member1Down: async () => {
        killedAt = Date.now();
        await extra.get(names[0])!.kill("SIGKILL");
      },
    });

    const live = [first, names[1]];
    await eventually(() => ownedOnce(live), { timeoutMs: 10_000, intervalMs: 200, message: "every member owned once by the two live replicas" });
    const after = await holders();
    t.diagnostic(`${names[0]} killed ${Date.now() - killedAt} ms ago; leases now: ${MEMBERS.map((m) => `${m}→${after.get(m)}`).join(", ")}`);
    for (const name of live) assert.equal(s.services.procs.get("execution")!.exit ?? extra.get(name)?.exit, undefined, `${name} still running`);
  } catch (e) {
    console.error(s.logs().slice(-30_000));
    throw e;
  }
});
