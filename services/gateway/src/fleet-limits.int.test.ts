import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { FleetShares, ObjectStore, createClient, type Sql } from "@flotilla/store";
import { eventually, freshDatabase, sleep } from "@flotilla/testkit";
import { buildGateway, type Gateway } from "./app.js";
import { TOKENS, bearer, testGatewayDeps } from "./access.test-support.js";

const RATE = 20;
const BURST = 20;
const WATCHES = 3;
const RENEW_MS = 250;

/**
 * `n` gateways against one database (each with its own pool and its own lease holder), the
 * per-user limits shared (`FleetShares`), and user vi allowed to watch ConfigMaps.
 */
async function fleet(n: number): Promise<{ urls: string[]; close(): Promise<void> }> {
  const db = await freshDatabase();
  const pools: Sql[] = [];
  const gateways: Gateway[] = [];
  const urls: string[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const sql = createClient(db.url, { max: 8 });
      pools.push(sql);
      const store = new ObjectStore(sql);
      const gw = buildGateway({
        ...testGatewayDeps(store),
        limits: { ratePerSecond: RATE, burst: BURST, watchesPerUser: WATCHES, failedAuthPerSecond: 5 },
        shares: new FleetShares({ sql, holder: `gateway-${i}`, renewMs: RENEW_MS }),
      });
      gateways.push(gw);
      urls.push((await gw.start({ host: "127.0.0.1", port: 0 })).url);
    }
    const binding = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "vi-views" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "flotilla:view" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "vi" }],
    };
    const r = await fetch(`${urls[0]}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings`, { method: "POST", headers: { ...bearer(), "content-type": "application/json" }, body: JSON.stringify(binding) });
    assert.equal(r.status, 201);
    // every gateway's RBAC copy has the binding (the admin is exempt from the limits)
    for (const u of urls) await eventually(async () => (await fetch(`${u}/api/v1/namespaces/default/configmaps?limit=1`, { headers: bearer(TOKENS.viewer) })).status === 200, { timeoutMs: 5000 });
  } catch (e) {
    await Promise.all(gateways.map((g) => g.stop()));
    await Promise.all(pools.map((p) => p.end({ timeout: 1 })));
    await db.drop();
    throw e;
  }
  return {
    urls,
    async close() {
      await Promise.all(gateways.map((g) => g.stop()));
      await Promise.all(pools.map((p) => p.end({ timeout: 1 })));
      await db.drop();
    },
  };
}

/** vi's requests for `ms`, four at a time, each to the next gateway in turn: how many were let through. */
async function hammer(urls: string[], ms: number): Promise<{ ok: number; refused: number }> {
  let ok = 0;
  let refused = 0;
  let i = 0;
  const end = performance.now() + ms;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (performance.now() < end) {
        const r = await fetch(`${urls[i++ % urls.length]}/apis`, { headers: bearer(TOKENS.viewer) });
        await r.arrayBuffer();
        if (r.status === 200) ok++;
        else if (r.status === 429) refused++;
        else assert.fail(`status ${r.status}`);
      }
    }),
  );
  return { ok, refused };
}

/** A watch of vi's on its own connection (closed with it, so no idle keep-alive connection holds a gateway's stop). */
function openWatch(url: string): Promise<{ status: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/api/v1/namespaces/default/configmaps?watch=true`, { headers: bearer(TOKENS.viewer), agent: false }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, close: () => req.destroy() });
    });
    req.on("error", reject);
  });
}

const SECONDS = 6;
// stated accuracy (README, Fleet-wide limits): within ±25 % of burst + rate × time over six seconds
const EXPECTED = BURST + RATE * SECONDS;
const MARGIN = 0.25;

for (const n of [1, 3]) {
  test(`a user's request rate is the same with ${n} gateway(s): about burst + rate × time let through`, async () => {
    const f = await fleet(n);
    try {
      // the setup's requests spent some of vi's burst: let it fill again
      await sleep((BURST / RATE) * 1000 + 200);
      const r = await hammer(f.urls, SECONDS * 1000);
      console.log(`${n} gateway(s), ${RATE}/s burst ${BURST}: ${r.ok} let through in ${SECONDS} s (${r.refused} refused), expected ${EXPECTED}`);
      assert.ok(r.refused > 0, "the client asked more than the limit");
      assert.ok(Math.abs(r.ok - EXPECTED) <= EXPECTED * MARGIN, `${r.ok} let through, expected ${EXPECTED} ± ${MARGIN * 100} %`);
    } finally {
      await f.close();
    }
  });

  test(`a user's watch cap is the same with ${n} gateway(s): watches opened one after another across them stop at the cap`, async () => {
    const f = await fleet(n);
    const open: { close(): void }[] = [];
    try {
      const codes: number[] = [];
      for (let i = 0; i < WATCHES + 3; i++) {
        const w = await openWatch(f.urls[i % n]!);
        codes.push(w.status);
        if (w.status === 200) open.push(w);
        // the next one a few renewals later: the gateways have seen each other's watches
        await sleep(3 * RENEW_MS);
      }
      console.log(`${n} gateway(s), cap ${WATCHES}: ${codes.join(" ")}`);
      assert.deepEqual(codes, [...Array(WATCHES).fill(200), ...Array(3).fill(429)]);
      // one closed frees its slot, on whichever gateway the next one comes
      open.shift()!.close();
      await sleep(3 * RENEW_MS);
      const again = await openWatch(f.urls[(WATCHES + 4) % n]!);
      open.push(again);
      assert.equal(again.status, 200);
    } finally {
      for (const w of open) w.close();
      await f.close();
    }
  });
}
