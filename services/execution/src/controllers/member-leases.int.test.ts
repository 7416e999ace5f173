import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ExecutionControllerFinalizer, executionNamespace, type Cluster, type Work } from "@flotilla/api";
import { connectNats, ensureStream, jetstreamManager } from "@flotilla/events";
import { startSimulator } from "@flotilla/member-sim";
import { EstimatorClient } from "@flotilla/proto/grpc";
import { SCHEDULER_IDENTITY } from "@flotilla/auth";
import { testGrpcSecurity } from "@flotilla/auth/testing";
import { ObjectStore } from "@flotilla/store";
import { NATS_URL, eventually, freshDatabase, uniqueName } from "@flotilla/testkit";
import { WORK, condition } from "../int.test-support.js";
import { ownerOf } from "../logic/shard.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const MEMBERS = Array.from({ length: 12 }, (_, i) => `member${i + 1}`);
const LEASE_MS = 3000;
const RENEW_MS = 300;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

interface Replica {
  name: string;
  child: ChildProcess;
  port: number;
  estimatorPort: number;
  output: string[];
  exited: Promise<void>;
}

/** A member request as the simulator saw it, with the execution replica that sent it (its User-Agent). */
interface Seen {
  at: number;
  cluster: string;
  method: string;
  url: string;
  replica: string;
}

test("member clusters are sharded over execution replicas by lease: each owned once, taken over when a replica dies or stops, rebalanced when one joins", { timeout: 180_000 }, async (t) => {
  const db = await freshDatabase();
  const nc = await connectNats({ servers: NATS_URL });
  const jsm = await jetstreamManager(nc);
  const stream = uniqueName("SH").toUpperCase();
  const prefix = uniqueName("sh");
  await ensureStream(jsm, { stream, prefix, maxAgeMs: 10 * 60_000 });
  const seen: Seen[] = [];
  const sim = await startSimulator(
    { admin: false, defaults: { readyDelayMs: 50 }, clusters: MEMBERS.map((name) => ({ name })) },
    {
      onRequest: (r) => {
        const replica = /flotilla-execution\/(\S+)/.exec(r.userAgent ?? "")?.[1];
        if (replica) seen.push({ at: Date.now(), cluster: r.cluster, method: r.method, url: r.url, replica });
      },
    },
  );
  const store = new ObjectStore(db.sql);
  const replicas = new Map<string, Replica>();
  // the estimator serves TLS and takes service account tokens: a certificate and key made for the test
  const security = await testGrpcSecurity();
  t.after(() => security.remove());

  async function startReplica(name: string): Promise<Replica> {
    const port = await freePort();
    const estimatorPort = await freePort();
    const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "services/execution/src/main.ts"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        NATS_URL,
        EVENTS_STREAM: stream,
        EVENTS_PREFIX: prefix,
        HOST: "127.0.0.1",
        PORT: String(port),
        ESTIMATOR_PORT: String(estimatorPort),
        TLS_CERT_FILE: security.files.cert,
        TLS_KEY_FILE: security.files.key,
        SERVICE_ACCOUNT_KEY_FILE: security.files.serviceAccountKey,
        REPLICA_NAME: name,
        LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
        DATABASE_POOL_SIZE: "4",
        MEMBER_ALLOW_HTTP: "loopback",
        MEMBER_SHARDING: "true",
        MEMBER_LEASE_DURATION: `${LEASE_MS}ms`,
        MEMBER_LEASE_RENEW_INTERVAL: `${RENEW_MS}ms`,
        CLUSTER_STATUS_UPDATE_FREQUENCY: "200ms",
        CLUSTER_FAILURE_THRESHOLD: "1s",
        CLUSTER_SUCCESS_THRESHOLD: "1s",
        CLUSTER_PROBE_TIMEOUT: "500ms",
        CLUSTER_CACHE_REFRESH: "200ms",
        MEMBER_REQUEST_TIMEOUT: "2s",
        WORK_RETRY_INTERVAL: "300ms",
      },
    });
    const output: string[] = [];
    const keep = (b: Buffer) => {
      output.push(b.toString());
      if (output.length > 5000) output.shift();
    };
    child.stdout!.on("data", keep);
    child.stderr!.on("data", keep);
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    const r: Replica = { name, child, port, estimatorPort, output, exited };
    replicas.set(name, r);
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.ok, { timeoutMs: 60_000, intervalMs: 200, message: `${name} ready (output: ${output.join("").slice(-2000)})` });
    return r;
  }

  const holders = async (): Promise<Map<string, string | null>> =>
    new Map((await db.sql<{ member: string; holder: string | null }[]>`SELECT member, holder FROM member_leases`).map((r) => [r.member, r.holder]));
  const transitions = async (): Promise<Map<string, number>> =>
    new Map((await db.sql<{ member: string; transitions: string }[]>`SELECT member, transitions FROM member_leases`).map((r) => [r.member, Number(r.transitions)]));
  /** Requests that act on the member: probes, watches, applies (not the node and pod lists any replica's estimator makes). */
  const acting = (s: Seen) => !/^\/api\/v1\/(nodes|pods)(\?|$)/.test(s.url);
  const requestersSince = (since: number) => {
    const out = new Map<string, Set<string>>();
    for (const s of seen) if (s.at >= since && acting(s)) (out.get(s.cluster) ?? out.set(s.cluster, new Set()).get(s.cluster)!).add(s.replica);
    return out;
  };
  /**
   * The lease holders as sampled every 50 ms. A replica holds a member's lease from before its
   * first request to the member until after its last one (it stops acting a round before it
   * releases), so each request must fall next to a sample naming its sender: the last sample
   * before it or the first after it. A request from a replica while the samples on both sides
   * name another holder is a member worked on by two replicas at once.
   */
  const timeline: { at: number; holders: Map<string, string | null> }[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const at = Date.now();
      timeline.push({ at, holders: await holders() });
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  t.after(async () => {
    sampling = false;
    await sampler;
    if (process.env.SHARD_TEST_LOGS) for (const r of replicas.values()) writeFileSync(path.join(process.env.SHARD_TEST_LOGS, `${r.name}.log`), r.output.join(""));
    for (const r of replicas.values()) r.child.kill("SIGKILL");
    await Promise.all([...replicas.values()].map((r) => r.exited));
    await sim.close();
    await jsm.streams.delete(stream).catch(() => {});
    await nc.close();
    await db.drop();
  });

  async function assertNoOverlap(): Promise<number> {
    sampling = false;
    await sampler;
    let checked = 0;
    for (const s of seen) {
      if (!acting(s)) continue;
      let i = timeline.findIndex((x) => x.at > s.at);
      if (i < 0) i = timeline.length;
      const before = timeline[i - 1];
      const after = timeline[i];
      if (!before) continue;
      checked++;
      assert.ok(
        before.holders.get(s.cluster) === s.replica || after?.holders.get(s.cluster) === s.replica,
        `${s.method} ${s.url} to ${s.cluster} from ${s.replica} at ${s.at}, while its lease was held by ${before.holders.get(s.cluster)} (${before.at}) and ${after?.holders.get(s.cluster)} (${after?.at})`,
      );
    }
    assert.ok(checked > 1000, `only ${checked} requests checked`);
    const tr = await transitions();
    for (const m of MEMBERS) {
      const runs: string[] = [];
      for (const s of seen) if (s.cluster === m && acting(s) && runs[runs.length - 1] !== s.replica) runs.push(s.replica);
      assert.ok(runs.length <= (tr.get(m) ?? 0) + 1, `${m}: ${runs.length} runs of requests (${runs.join(" → ")}) for ${tr.get(m)} lease changes`);
    }
    return checked;
  }
  let lastMiss = "";
  /** Every member's lease is held by the replica it hashes to among `live`, and since `since` only that holder worked on it. */
  async function ownedOnceBy(live: string[], since: number): Promise<Map<string, string> | undefined> {
    const h = await holders();
    const req = requestersSince(since);
    const out = new Map<string, string>();
    for (const m of MEMBERS) {
      const holder = h.get(m);
      const who = req.get(m);
      if (!holder || holder !== ownerOf(m, live) || !who || who.size !== 1 || !who.has(holder)) {
        lastMiss = `${m}: lease held by ${holder}, worked on by ${[...(who ?? [])].join(",") || "nobody"}`;
        return undefined;
      }
      out.set(m, holder);
    }
    return out;
  }
  const applied = async (m: string, value: string) => {
    const w = await store.get<Work>({ gk: WORK, namespace: executionNamespace(m), name: "settings" });
    const cm = sim.cluster(m).get("v1", "ConfigMap", "settings", "default") as { data?: Record<string, string> } | undefined;
    return condition(w, "Applied")?.status === "True" && cm?.data?.value === value;
  };
  const expected = new Map(MEMBERS.map((m) => [m, m]));
  const setValue = async (m: string, value: string) => {
    expected.set(m, value);
    const w = (await store.get<Work>({ gk: WORK, namespace: executionNamespace(m), name: "settings" }))!;
    await store.update<Work>({ ...w, spec: { workload: { manifests: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: "default" }, data: { value } }] as never } } });
  };

  // twelve members, each with one Work
  for (const m of MEMBERS) {
    const c = sim.cluster(m);
    await store.create({ apiVersion: "v1", kind: "Secret", metadata: { name: m, namespace: "karmada-cluster" }, type: "Opaque", data: { token: Buffer.from(c.token).toString("base64") } });
    await store.create<Cluster>({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: m }, spec: { apiEndpoint: c.url, secretRef: { namespace: "karmada-cluster", name: m }, syncMode: "Push" } });
    await store.create<Work>({
      apiVersion: "work.karmada.io/v1alpha1",
      kind: "Work",
      metadata: { name: "settings", namespace: executionNamespace(m), finalizers: [ExecutionControllerFinalizer] },
      spec: { workload: { manifests: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: "default" }, data: { value: m } }] as never } },
    });
  }

  // three replicas
  const t0 = Date.now();
  await Promise.all(["exec-a", "exec-b", "exec-c"].map((n) => startReplica(n)));
  await eventually(async () => (await Promise.all(MEMBERS.map((m) => applied(m, m)))).every(Boolean), { timeoutMs: 60_000, message: "every Work applied" });
  const settled = Date.now();
  // the replicas start one after the other: the first takes every member, then hands the others' over
  const first = await eventually(() => ownedOnceBy(["exec-a", "exec-b", "exec-c"], Date.now() - 1000), { timeoutMs: 20_000, intervalMs: 100, message: "every member owned once by a, b or c" }).catch((e: Error) => {
    throw new Error(`${e.message}; last: ${lastMiss}`);
  });
  const count = (o: Map<string, string>, r: string) => [...o.values()].filter((x) => x === r).length;
  for (const r of ["exec-a", "exec-b", "exec-c"]) assert.ok(count(first, r) >= 1, `${r} owns ${count(first, r)} of 12`);
  t.diagnostic(`3 replicas started; every Work applied ${settled - t0} ms and every member owned once ${Date.now() - t0} ms after the start; a/b/c own ${count(first, "exec-a")}/${count(first, "exec-b")}/${count(first, "exec-c")}`);
  for (const r of ["exec-a", "exec-b", "exec-c"]) {
    const metrics = await (await fetch(`http://127.0.0.1:${replicas.get(r)!.port}/metrics`)).text();
    assert.match(metrics, new RegExp(`^flotilla_execution_owned_clusters ${count(first, r)}$`, "m"));
  }

  // exec-c dies (no goodbye): its members are taken over once its leases run out
  const ofC = MEMBERS.filter((m) => first.get(m) === "exec-c");
  const killedAt = Date.now();
  replicas.get("exec-c")!.child.kill("SIGKILL");
  await replicas.get("exec-c")!.exited;
  await eventually(
    async () => {
      const h = await holders();
      const req = requestersSince(killedAt);
      return ofC.every((m) => (h.get(m) === "exec-a" || h.get(m) === "exec-b") && req.get(m)?.has(h.get(m)!));
    },
    { timeoutMs: 15_000, intervalMs: 100, message: "exec-c's members taken over" },
  );
  const takeover = Date.now() - killedAt;
  t.diagnostic(`exec-c killed: its ${ofC.length} members taken over after ${takeover} ms (lease ${LEASE_MS} ms)`);
  assert.ok(takeover < LEASE_MS + 4000, `takeover took ${takeover} ms`);
  // a moved member's Works follow it
  await setValue(ofC[0]!, "after-kill");
  await eventually(() => applied(ofC[0]!, "after-kill"), { timeoutMs: 10_000, message: `${ofC[0]} Work change applied by its new owner` });

  // exec-d joins: it takes its share within a few rounds
  const startedAt = Date.now();
  await startReplica("exec-d");
  const joinedAt = Date.now();
  const second = await eventually(
    async () => {
      const o = await ownedOnceBy(["exec-a", "exec-b", "exec-d"], Date.now() - 1000);
      return o && count(o, "exec-d") > 0 ? o : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 100, message: "rebalanced onto exec-d" },
  );
  t.diagnostic(`exec-d joined (ready ${joinedAt - startedAt} ms after its start): it owns ${count(second, "exec-d")} members ${Date.now() - joinedAt} ms after it was ready (a/b/d own ${count(second, "exec-a")}/${count(second, "exec-b")}/${count(second, "exec-d")})`);
  const ofD = MEMBERS.filter((m) => second.get(m) === "exec-d");
  await setValue(ofD[0]!, "after-join");
  await eventually(() => applied(ofD[0]!, "after-join"), { timeoutMs: 10_000, message: `${ofD[0]} Work change applied by exec-d` });

  // every replica's estimator answers for every member, owned or not
  const est = new EstimatorClient(`127.0.0.1:${replicas.get("exec-a")!.estimatorPort}`, { deadlineMs: 5000, credentials: security.caller(store, SCHEDULER_IDENTITY) });
  try {
    const answers = await est.maxAvailableReplicas(MEMBERS, { resourceRequest: { cpu: "100m", memory: "128Mi" } });
    assert.deepEqual(
      answers.filter((a) => a.maxReplicas < 0).map((a) => `${a.name}: ${a.error}`),
      [],
    );
    assert.equal(answers.length, MEMBERS.length);
  } finally {
    est.close();
  }

  // exec-b stops (SIGTERM): it gives its leases up, so the others take them within a round or two
  const ofB = MEMBERS.filter((m) => second.get(m) === "exec-b");
  const stoppedAt = Date.now();
  replicas.get("exec-b")!.child.kill("SIGTERM");
  await replicas.get("exec-b")!.exited;
  const exitedAfter = Date.now() - stoppedAt;
  await eventually(
    async () => {
      const h = await holders();
      const req = requestersSince(stoppedAt);
      return ofB.every((m) => (h.get(m) === "exec-a" || h.get(m) === "exec-d") && req.get(m)?.has(h.get(m)!));
    },
    { timeoutMs: 15_000, intervalMs: 100, message: "exec-b's members taken over" },
  );
  const handover = Date.now() - stoppedAt;
  t.diagnostic(`exec-b stopped (exited after ${exitedAfter} ms): its ${ofB.length} members taken over after ${handover} ms`);
  assert.ok(handover < exitedAfter + 4 * RENEW_MS + 2000, `handover took ${handover} ms`);
  await eventually(() => ownedOnceBy(["exec-a", "exec-d"], Date.now() - 1000), { timeoutMs: 10_000, message: "every member owned once by a or d" });

  const checked = await assertNoOverlap();
  t.diagnostic(`${checked} requests to the members checked against ${timeline.length} samples of the lease holders: none from a replica that did not hold the member's lease`);
  for (const m of MEMBERS) assert.ok(await applied(m, expected.get(m)!), `${m} still applied with ${expected.get(m)}`);
});
