// The seed's Divided walk-through (divided-walkthrough.ts) with three replicas of every service
// (gateway, execution with member sharding, binding, scheduler, taint-manager, eviction), and one
// replica of each killed with -9 at a random moment after member1 fails, in a random order
// (REPLICAS_SEED replays one). The walk-through must end as it does on one replica of each
// (DIVIDED_END_STATE, which divided.int.test.ts checks on a single-replica stack), the
// control-plane Deployment never below 3 ready (the walk-through's own check), every member
// owned by exactly one live execution replica, and no work done twice at once (see below).
// Needs the builds: npx tsc -b services/gateway services/execution services/binding services/scheduler services/taint-manager services/eviction
import { test } from "node:test";
import assert from "node:assert/strict";
import { PostgresServer, canRunPostgresServer, eventually, sleep } from "@flotilla/testkit";
import { ownerOf } from "../../../services/execution/src/logic/shard.js";
import { SERVICE_NAMES, type Replica, type ServiceName } from "../../load/lib/stack.js";
import { random } from "../chaos/harness.js";
import { DIVIDED_END_STATE, dividedEndState, dividedWalkThrough } from "./divided-walkthrough.js";
import { startStack, type MemberRequest } from "./harness.js";

const REPLICAS = 3;
const MEMBERS = ["member1", "member2", "member3"];
const ENV = { MEMBER_SHARDING: "true", MEMBER_LEASE_DURATION: "3s", MEMBER_LEASE_RENEW_INTERVAL: "500ms" };
/** The services whose reconciles are checked through their logs (debug: each reconcile logs its key and duration). */
const RECONCILERS: ServiceName[] = ["binding", "scheduler", "taint-manager", "eviction"];
const DEBUG = Object.fromEntries(RECONCILERS.map((s) => [s, { LOG_LEVEL: "debug" }]));

/** A member request sent by an execution replica (its User-Agent names it). */
type Sent = MemberRequest & { at: number; replica: string };
/** One reconcile of one key by one replica, from its log line: [start, end] in ms since the epoch. */
type Reconcile = { label: string; service: string; controller: string; key: string; start: number; end: number };

const metric = async (port: number, name: string) => {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1] ?? NaN);
};

test("the seed's Divided walk-through with three replicas of every service, one of each killed with -9 mid-failover: the same end state as one replica, every member owned once, no work done twice at once", { timeout: 300_000, skip: !canRunPostgresServer() && "no PostgreSQL binaries" }, async (t) => {
  const seed = process.env.REPLICAS_SEED ? Number(process.env.REPLICAS_SEED) : Math.floor(Math.random() * 2 ** 31);
  t.diagnostic(`REPLICAS_SEED=${seed}`);
  const rand = random(seed);
  const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

  const sent: Sent[] = [];
  const t0 = Date.now();
  // a Postgres of the test's own: 18 processes hold about 150 connections (a pool of 4 each, the
  // relay's lock, leader elections, …), more than a default server's 100 that other tests share
  const pg = await PostgresServer.start({ maxConnections: 300 });
  const s = await startStack({
    pg,
    replicas: REPLICAS,
    env: ENV,
    serviceEnv: DEBUG,
    onMemberRequest: (r) => {
      const replica = /flotilla-execution\/(\S+)/.exec(r.userAgent ?? "")?.[1];
      if (replica) sent.push({ ...r, at: Date.now(), replica });
    },
  }).catch(async (e: unknown) => {
    await pg.destroy();
    throw e;
  });
  t.diagnostic(`${SERVICE_NAMES.length * REPLICAS} service processes up, members joined and Ready in ${Date.now() - t0} ms`);

  // every reconcile of the checked services, from the line it logs when it ends
  const reconciles: Reconcile[] = [];
  s.processLogs.tap((label, line) => {
    const service = label.replace(/-\d+$/, "");
    if (!RECONCILERS.includes(service as ServiceName) || !line.includes('"durationMs"')) return;
    let j: { msg?: string; time?: string; durationMs?: number; controller?: string; key?: string };
    try {
      j = JSON.parse(line) as typeof j;
    } catch {
      return;
    }
    if (!j.controller || !j.key || typeof j.durationMs !== "number" || !j.time || !/^reconcile/.test(j.msg ?? "")) return;
    const end = Date.parse(j.time);
    reconciles.push({ label, service, controller: j.controller, key: j.key, start: end - j.durationMs, end });
  });

  // the lease holders, sampled
  const holders = async () => new Map((await s.db.sql<{ member: string; holder: string | null }[]>`SELECT member, holder FROM member_leases`).map((r) => [r.member, r.holder]));
  const timeline: { at: number; holders: Map<string, string | null> }[] = [];
  let sampling = true;
  let connections = 0;
  let connectionsByApp = "";
  const sampler = (async () => {
    while (sampling) {
      const at = Date.now();
      timeline.push({ at, holders: await holders() });
      const byApp = await s.db.sql<{ app: string; n: number }[]>`SELECT application_name AS app, count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() GROUP BY 1 ORDER BY 2 DESC`;
      const n = byApp.reduce((a, r) => a + r.n, 0);
      if (n > connections) [connections, connectionsByApp] = [n, byApp.map((r) => `${r.app || "?"} ${r.n}`).join(", ")];
      await sleep(100);
    }
  })();

  const killed = new Map<ServiceName, Replica>();
  const kills: string[] = [];
  t.after(async () => {
    sampling = false;
    await sampler.catch(() => {});
    await s.close();
    await pg.destroy();
  });

  const exec = s.services.replicasOf("execution");
  const execName = (r: Replica) => r.env.REPLICA_NAME!;
  const live = (name: ServiceName) => s.services.replicasOf(name).filter((r) => r.label !== killed.get(name)?.label);
  /** Every member's lease held by the replica it hashes to among the live ones, and the replicas' own counts adding up to one owner per member. */
  const ownedOnce = async (replicas: readonly Replica[]) => {
    const names = replicas.map(execName);
    const h = await holders();
    if (!MEMBERS.every((m) => h.get(m) === ownerOf(m, names))) return false;
    const counts = await Promise.all(replicas.map((r) => metric(r.port, "flotilla_execution_owned_clusters")));
    return counts.reduce((a, b) => a + b, 0) === MEMBERS.length && names.every((n, k) => counts[k] === MEMBERS.filter((m) => h.get(m) === n).length);
  };

  try {
    await eventually(() => ownedOnce(exec), { timeoutMs: 20_000, intervalMs: 200, message: "members spread over the three execution replicas" });
    const before = await holders();
    t.diagnostic(`leases before: ${MEMBERS.map((m) => `${m}→${before.get(m)}`).join(", ")}`);

    /** The replica of `name` to kill: the scheduler's leader, the execution replica that works on member1 or member2, any replica of the others. */
    const victim = async (name: ServiceName): Promise<Replica> => {
      const all = s.services.replicasOf(name);
      if (name === "scheduler") {
        const leading = await Promise.all(all.map((r) => metric(r.port, "flotilla_scheduler_leading").catch(() => 0)));
        const leader = all.find((_, i) => leading[i] === 1);
        if (leader) return leader;
      }
      if (name === "execution") {
        const h = await holders();
        const owner = all.find((r) => execName(r) === h.get(rand() < 0.5 ? "member1" : "member2"));
        if (owner) return owner;
      }
      return all[between(0, all.length - 1)]!;
    };
    let down = 0;
    let chaos: Promise<void> | undefined;
    const killOneOfEach = async () => {
      const order = [...SERVICE_NAMES];
      for (let i = order.length - 1; i > 0; i--) {
        const j = between(0, i);
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      for (const name of order) {
        await sleep(between(0, 800));
        const r = await victim(name);
        killed.set(name, r);
        kills.push(`${Date.now() - down} ms after member1 failed: kill -9 ${r.label}${name === "execution" ? ` (${execName(r)})` : ""}`);
        await r.proc.kill("SIGKILL");
      }
    };
    await dividedWalkThrough(s, (m) => t.diagnostic(m), {
      member1Down: async () => {
        down = Date.now();
        chaos = killOneOfEach();
      },
    });
    await chaos;
    for (const k of kills) t.diagnostic(k);
    assert.equal(killed.size, SERVICE_NAMES.length, "one replica of every service killed");

    // the same end state as on one replica of each service
    assert.deepEqual(await dividedEndState(s), DIVIDED_END_STATE);

    // every member owned once by the live execution replicas; the scheduler led by one live replica
    await eventually(() => ownedOnce(live("execution")), { timeoutMs: 15_000, intervalMs: 200, message: "every member owned once by the two live execution replicas" });
    const after = await holders();
    t.diagnostic(`leases after: ${MEMBERS.map((m) => `${m}→${after.get(m)}`).join(", ")}`);
    await eventually(async () => (await Promise.all(live("scheduler").map((r) => metric(r.port, "flotilla_scheduler_leading")))).reduce((a, b) => a + b, 0) === 1, {
      timeoutMs: 10_000,
      intervalMs: 200,
      message: "one live scheduler replica leads",
    });
    for (const name of SERVICE_NAMES) for (const r of live(name)) assert.equal(r.proc.exit, undefined, `${r.label} exited on its own`);

    sampling = false;
    await sampler;

    // No double work, 1: every request an execution replica sent to a member while acting on it
    // (probes, watches, applies; not the node and pod lists any replica's estimator makes) came
    // from the member's lease holder of that moment. A holder has the lease from before its first
    // such request until after its last (it stops acting a round before it releases, and its own
    // validity ends a renew interval before the database's), so the sample just before or just
    // after the request must name the sender; one that names another replica on both sides is a
    // member worked on by two replicas at once. And the senders of a member change no more often
    // than its lease did.
    const acting = (r: Sent) => !/^\/api\/v1\/(nodes|pods)(\?|$)/.test(r.url);
    let checked = 0;
    for (const r of sent) {
      if (!acting(r)) continue;
      let i = timeline.findIndex((x) => x.at > r.at);
      if (i < 0) i = timeline.length;
      const [b, a] = [timeline[i - 1], timeline[i]];
      if (!b) continue;
      checked++;
      assert.ok(
        b.holders.get(r.cluster) === r.replica || a?.holders.get(r.cluster) === r.replica,
        `${r.method} ${r.url} to ${r.cluster} from ${r.replica} at ${r.at}, while its lease was held by ${b.holders.get(r.cluster)} (${b.at}) and ${a?.holders.get(r.cluster)} (${a?.at})`,
      );
    }
    assert.ok(checked > 100, `only ${checked} member requests checked`);
    const transitions = new Map((await s.db.sql<{ member: string; transitions: string }[]>`SELECT member, transitions FROM member_leases`).map((r) => [r.member, Number(r.transitions)]));
    for (const m of MEMBERS) {
      const runs: string[] = [];
      for (const r of sent) if (r.cluster === m && acting(r) && runs[runs.length - 1] !== r.replica) runs.push(r.replica);
      assert.ok(runs.length <= (transitions.get(m) ?? 0) + 1, `${m}: ${runs.length} runs of requests (${runs.join(" → ")}) for ${transitions.get(m)} lease changes`);
    }

    // No double work, 2: no key of a controller was reconciled by two replicas of its service at
    // once. Each reconcile logs (at debug) its controller, key and duration when it ends, so
    // [end - duration, end] is when it ran (same clock for every process; ms, so runs that merely
    // touch within 2 ms are not counted). A replica killed mid-reconcile logs nothing for that
    // one: what it was doing is not checked, the redelivered wake-up's reconcile is.
    const byKey = new Map<string, Reconcile[]>();
    for (const r of reconciles) {
      const k = `${r.service} ${r.controller} ${r.key}`;
      (byKey.get(k) ?? byKey.set(k, []).get(k)!).push(r);
    }
    const overlaps: string[] = [];
    for (const [k, list] of byKey) {
      list.sort((a, b) => a.start - b.start);
      for (let i = 0; i < list.length; i++) {
        for (let j = i + 1; j < list.length && list[j]!.start < list[i]!.end - 2; j++) {
          if (list[j]!.label !== list[i]!.label) overlaps.push(`${k}: ${list[i]!.label} ${list[i]!.start}–${list[i]!.end} and ${list[j]!.label} ${list[j]!.start}–${list[j]!.end}`);
        }
      }
    }
    const perService = RECONCILERS.map((svc) => `${svc} ${reconciles.filter((r) => r.service === svc).length} (by ${new Set(reconciles.filter((r) => r.service === svc).map((r) => r.label)).size} replicas)`);
    t.diagnostic(`member requests checked against the lease holders: ${checked}; reconciles checked: ${perService.join(", ")}; at most ${connections} Postgres connections (${connectionsByApp})`);
    for (const svc of RECONCILERS) assert.ok(reconciles.some((r) => r.service === svc), `no reconcile of ${svc} seen in its logs`);
    assert.deepEqual(overlaps, [], "keys reconciled by two replicas at once");
  } catch (e) {
    for (const k of kills) console.error(k);
    const lines = s.logs().split("\n").filter((l) => !l.includes('"level":"debug"'));
    console.error(`REPLICAS_SEED=${seed}\n${lines.join("\n").slice(-30_000)}`);
    throw e;
  }
});
