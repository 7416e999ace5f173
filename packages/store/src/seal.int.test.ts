import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { KubeObject } from "@flotilla/api";
import { freshDatabase } from "@flotilla/testkit";
import { SealError, Sealer, parseKeys } from "./seal.js";
import { ObjectStore } from "./store.js";

const TOKEN = "member1-bearer-token-do-not-leak";
const B64 = Buffer.from(TOKEN).toString("base64");
const key = (id: string) => ({ id, key: randomBytes(32) });
const credential = (name = "member1", ns = "karmada-cluster"): KubeObject => ({ apiVersion: "v1", kind: "Secret", metadata: { name, namespace: ns }, data: { token: B64 }, stringData: { caBundle: "PEM" } } as KubeObject);

test("key files: id:base64 of 32 bytes per line, the first seals", () => {
  const k = randomBytes(32).toString("base64");
  const keys = parseKeys(`# rotated 2026-11\nnew:${k}\n\nold:${randomBytes(32).toString("base64")}\n`);
  assert.deepEqual(keys.map((x) => x.id), ["new", "old"]);
  for (const [bad, why] of [
    ["", /no key/],
    ["k1", /line 1: want id:base64key/],
    [`k1:${randomBytes(16).toString("base64")}`, /must be 32 bytes .* found 16/],
    [`k1:${k}\nk1:${k}`, /line 2: key id "k1" given twice/],
  ] as const) assert.throws(() => parseKeys(bad), why);
});

test("sealing: credentials only, bound to their name, opened by any listed key", () => {
  const a = key("a");
  const s = new Sealer([a]);
  const sealed = s.seal(credential());
  assert.equal((sealed as Record<string, unknown>).data, undefined);
  assert.equal((sealed as Record<string, unknown>).stringData, undefined);
  assert.ok(!JSON.stringify(sealed).includes(B64) && !JSON.stringify(sealed).includes(TOKEN) && !JSON.stringify(sealed).includes("PEM"));
  assert.deepEqual(s.open(sealed), credential());
  // a template Secret elsewhere, and other kinds, are stored as given
  assert.deepEqual(s.seal(credential("app", "default")), credential("app", "default"));
  const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "karmada-cluster" }, data: { a: "b" } } as KubeObject;
  assert.deepEqual(s.seal(cm), cm);
  // a sealed value copied onto another Secret does not open
  assert.throws(() => s.open({ ...sealed, metadata: { ...sealed.metadata, name: "member2" } }), SealError);
  // tampering is detected
  const v = (sealed as Record<string, string>).sealed!;
  assert.throws(() => s.open({ ...sealed, sealed: v.slice(0, -4) + (v.endsWith("AAAA") ? "BBBB" : "AAAA") } as KubeObject), /does not open/);
  // rotation: the new key seals, the old one still opens; without it, a clear error
  const b = key("b");
  const rotated = new Sealer([b, a]);
  assert.deepEqual(rotated.open(sealed), credential());
  assert.ok(rotated.stale(sealed));
  assert.ok(!rotated.stale(rotated.seal(credential())));
  assert.throws(() => new Sealer([b]).open(sealed), /sealed with key "a", which the key file does not hold/);
});

test("a store with a sealer keeps no credential in clear in Postgres (rows and outbox), and reads them back everywhere", async () => {
  const db = await freshDatabase();
  try {
    const a = key("a");
    const store = new ObjectStore(db.sql, { sealer: new Sealer([a]) });
    const watch = await store.watch("/Secret", { namespace: "karmada-cluster" });
    const created = await store.create(credential());
    assert.equal((created as Record<string, Record<string, string>>).data!.token, B64);
    const raw = async () => JSON.stringify(await db.sql`SELECT body FROM objects`) + JSON.stringify(await db.sql`SELECT object FROM outbox`);
    await store.update({ ...created, metadata: { ...created.metadata, labels: { rotated: "no" } } });
    for (const leak of [TOKEN, B64, "PEM"]) assert.ok(!(await raw()).includes(leak), `${leak} is in Postgres`);
    const got = await store.get({ gk: "/Secret", namespace: "karmada-cluster", name: "member1" });
    assert.equal((got as Record<string, Record<string, string>>).data!.token, B64);
    assert.equal((got as Record<string, Record<string, string>>).stringData!.caBundle, "PEM");
    const listed = (await store.list("/Secret", { namespace: "karmada-cluster" })).items[0] as Record<string, Record<string, string>>;
    assert.equal(listed.data!.token, B64);
    const first = await watch.next();
    assert.equal((first.value!.object as Record<string, Record<string, string>>).data!.token, B64);
    await watch.return(undefined);

    // a store without the key sees the Secret without values (never an error, never ciphertext as data)
    const blind = await new ObjectStore(db.sql).get({ gk: "/Secret", namespace: "karmada-cluster", name: "member1" });
    assert.equal((blind as Record<string, unknown>).data, undefined);
    // one whose keys cannot open it says so on the object, and the other Secrets still read
    const wrong = await new ObjectStore(db.sql, { sealer: new Sealer([key("z")]) }).list("/Secret", { namespace: "karmada-cluster" });
    assert.equal((wrong.items[0] as Record<string, unknown>).data, undefined);
    assert.match(wrong.items[0]!.metadata.annotations?.["flotilla.io/sealed-unreadable"] ?? "", /sealed with key "a"/);

    // rotation: a new first key, reseal, then the old key can go
    const b = key("b");
    const rotated = new ObjectStore(db.sql, { sealer: new Sealer([b, a]) });
    // and one written in clear before encryption was configured
    await new ObjectStore(db.sql).create(credential("member2"));
    assert.ok((await raw()).includes(B64), "member2 was written in clear");
    assert.equal(await rotated.resealCredentials(), 2);
    assert.equal(await rotated.resealCredentials(), 0, "nothing left to reseal");
    // the rows hold no clear value any more (the outbox keeps the change from before until it is pruned)
    assert.ok(!JSON.stringify(await db.sql`SELECT body FROM objects`).includes(B64));
    const [row] = await db.sql<{ body: { sealed: string } }[]>`SELECT body FROM objects WHERE name = 'member2'`;
    assert.match(row!.body.sealed, /^flotilla:v1:b:/);
    const onlyB = new ObjectStore(db.sql, { sealer: new Sealer([b]) });
    for (const n of ["member1", "member2"]) {
      const s = (await onlyB.get({ gk: "/Secret", namespace: "karmada-cluster", name: n })) as Record<string, Record<string, string>>;
      assert.equal(s.data!.token, B64, n);
    }
  } finally {
    await db.drop();
  }
});
