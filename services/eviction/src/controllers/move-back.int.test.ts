import { test } from "node:test";
import assert from "node:assert/strict";
import { MoveBackAnnotation, MovingBackLabel, PlacementBeforeFailoverAnnotation, rfc3339, type AnyResourceBinding } from "@flotilla/api";
import { LimitLeases, ObjectStore, createClient, type Sql } from "@flotilla/store";
import { FAST_CONTROLLERS, eventually, sleep } from "@flotilla/testkit";
import { buildApp, type App } from "../app.js";
import { DIVIDED, makeCluster, rbRef, reportStatus, setup } from "../int.test-support.js";
import { MOVE_BACK_LIMIT } from "./move-back.js";

const BEFORE = [
  { name: "member1", replicas: 1 },
  { name: "member2", replicas: 2 },
];

/** A binding evicted from member1 (all 3 on member2 now) that moves back under `maxConcurrent`. */
function evicted(name: string, maxConcurrent: number): AnyResourceBinding {
  return {
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ResourceBinding",
    metadata: {
      name,
      namespace: "default",
      annotations: {
        [MoveBackAnnotation]: JSON.stringify({ stabilizationSeconds: 0, maxConcurrent }),
        [PlacementBeforeFailoverAnnotation]: JSON.stringify(BEFORE),
      },
    },
    spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name }, replicas: 3, clusters: [{ name: "member2", replicas: 3 }], placement: { ...DIVIDED } },
  };
}

const movingBackNow = async (sql: Sql) => (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM objects WHERE labels @> ${sql.json({ [MovingBackLabel]: "true" })}`)[0]!.n;

/**
 * Many bindings wait on one recovered cluster, three eviction replicas (each with its own pool,
 * so its own key-lock session) reconcile them all at the same instant; a reporter plays the
 * returning copies (Healthy 300 ms after a move-back started) so each move-back finishes and the
 * next may start. A sampler counts the bindings carrying the moving-back label every 10 ms.
 */
async function fleet(maxConcurrent: number, bindings: number): Promise<{ max: number; samples: number; ms: number }> {
  const env = await setup({ MOVE_BACK_SLOT_RECHECK: "300ms", CONCURRENT_GRACEFUL_EVICTION_SYNCS: "16" });
  const pools: Sql[] = [];
  let stop = false;
  try {
    const apps: App[] = [env.app];
    for (let i = 0; i < 2; i++) {
      const sql = createClient(env.db.url, { max: 4 });
      pools.push(sql);
      apps.push(await env.startAnother(buildApp({ store: new ObjectStore(sql), sql, log: env.log, cfg: env.cfg, js: env.js, runtime: { ...FAST_CONTROLLERS, abortGraceMs: 200 } })));
    }
    const member1 = makeCluster("member1", "True");
    member1.status!.conditions![0]!.lastTransitionTime = rfc3339(Date.now() - 60_000);
    await env.store.create(member1);
    await env.store.create(makeCluster("member2", "True"));
    const names = Array.from({ length: bindings }, (_, i) => `app-${i}`);
    for (const n of names) await env.store.create(evicted(n, maxConcurrent));

    let max = 0;
    let samples = 0;
    const sampler = (async () => {
      while (!stop) {
        max = Math.max(max, await movingBackNow(env.db.sql));
        samples++;
        await sleep(10);
      }
    })();
    const started = new Map<string, number>();
    const reporter = (async () => {
      while (!stop) {
        for (const n of names) {
          const b = await env.store.get<AnyResourceBinding>(rbRef(n));
          if (b?.metadata.labels?.[MovingBackLabel] !== "true") continue;
          const t = started.get(b.metadata.uid!) ?? Date.now();
          started.set(b.metadata.uid!, t);
          if (Date.now() - t >= 300) await reportStatus(env.store, n, { member1: "Healthy", member2: "Healthy" }, true, { member1: { readyReplicas: 1 }, member2: { readyReplicas: 3 } });
        }
        await sleep(50);
      }
    })();

    const t0 = Date.now();
    // the herd: every replica reconciles every binding at once
    await Promise.all(apps.flatMap((a) => names.map((n) => a.moveBack.enqueue(`rb/default/${n}`).catch(() => undefined))));
    await eventually(
      async () => {
        for (const n of names) {
          const b = await env.store.get<AnyResourceBinding>(rbRef(n));
          if (b?.metadata.annotations?.[PlacementBeforeFailoverAnnotation] !== undefined) return false;
          assert.deepEqual(b?.spec?.clusters, BEFORE, `${n} moved back`);
        }
        return true;
      },
      { timeoutMs: 120_000 },
    );
    const ms = Date.now() - t0;
    stop = true;
    await Promise.all([sampler, reporter]);
    // every slot row was given back (a finished move-back frees its slot at once)
    const rows = await env.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM limit_leases WHERE limit_name = ${MOVE_BACK_LIMIT} AND expires_at > now()`;
    assert.equal(rows[0]!.n, 0, "no slot left held");
    return { max, samples, ms };
  } finally {
    stop = true;
    await env.close();
    await Promise.all(pools.map((p) => p.end({ timeout: 1 })));
  }
}

test("maxConcurrent 1 holds across three eviction replicas: never two bindings moving back at once", async () => {
  const r = await fleet(1, 12);
  console.log(`maxConcurrent 1, 12 bindings, 3 replicas: at most ${r.max} moving back in ${r.samples} samples, all back in ${r.ms} ms`);
  assert.equal(r.max, 1);
});

test("maxConcurrent 2 holds across three eviction replicas, and two do move back side by side", async () => {
  const r = await fleet(2, 12);
  console.log(`maxConcurrent 2, 12 bindings, 3 replicas: at most ${r.max} moving back in ${r.samples} samples, all back in ${r.ms} ms`);
  assert.equal(r.max, 2);
});

test("a slot claimed by a binding that never wrote its surge is free again after its grace; a labelled binding holds one without a row", async () => {
  const env = await setup();
  try {
    const limits = new LimitLeases(env.db.sql);
    const a = await limits.claim({ limit: "t", holder: "a", max: 1, graceMs: 400, label: MovingBackLabel });
    assert.deepEqual(a, { granted: true, held: 0 });
    assert.deepEqual(await limits.claim({ limit: "t", holder: "a", max: 1, graceMs: 400, label: MovingBackLabel }), { granted: true, held: 0 }, "claiming again keeps it");
    assert.deepEqual(await limits.claim({ limit: "t", holder: "b", max: 1, graceMs: 400, label: MovingBackLabel }), { granted: false, held: 1 });
    await sleep(600);
    assert.deepEqual(await limits.claim({ limit: "t", holder: "b", max: 1, graceMs: 400, label: MovingBackLabel }), { granted: true, held: 0 }, "a's claim expired (a crash before its write)");
    await limits.release("t", ["b"]);
    // a binding carrying the label holds a slot (its claim row long gone)
    const b = evicted("labelled", 1);
    b.metadata.labels = { [MovingBackLabel]: "true" };
    const stored = await env.store.create(b);
    assert.deepEqual(await limits.claim({ limit: "t", holder: "c", max: 1, graceMs: 400, label: MovingBackLabel }), { granted: false, held: 1 });
    assert.deepEqual(await limits.claim({ limit: "t", holder: stored.metadata.uid!, max: 1, graceMs: 400, label: MovingBackLabel }), { granted: true, held: 0 }, "its own label does not count against it");
    await env.store.delete(rbRef("labelled"));
    await limits.release("t", [stored.metadata.uid!]);
    assert.deepEqual(await limits.claim({ limit: "t", holder: "c", max: 1, graceMs: 400, label: MovingBackLabel }), { granted: true, held: 0 }, "the binding went, and its slot with it");
    // concurrent claims of the last slot: exactly one wins
    const many = await Promise.all(Array.from({ length: 8 }, (_, i) => limits.claim({ limit: "u", holder: `h${i}`, max: 2, graceMs: 5000 })));
    assert.equal(many.filter((x) => x.granted).length, 2);
  } finally {
    await env.close();
  }
});
