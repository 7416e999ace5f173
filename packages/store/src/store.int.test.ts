import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { ageOutbox, freshDatabase, eventually, sleep, type TestDatabase } from "@flotilla/testkit";
import { ObjectStore, parseOutboxNotice, type ListOptions, type ListResult, type WatchEvent } from "@flotilla/store";
import { matchesRequirements, parseSelector, type BadRequestError, type InvalidError, type KubeObject } from "@flotilla/api";

const cm = (name: string, data: Record<string, string> = { a: "1" }, extra: Partial<KubeObject["metadata"]> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default", ...extra },
  data,
});
const deploy = (name: string, replicas = 1): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: "default", labels: { app: name } },
  spec: { replicas },
});

describe("object store", () => {
  let db: TestDatabase;
  let store: ObjectStore;
  before(async () => {
    db = await freshDatabase();
    store = new ObjectStore(db.sql, { indexers: { "apps/Deployment": (o) => [`replicas:${o.spec?.replicas}`] } });
  });
  after(async () => db.drop());

  test("create fills uid, creationTimestamp, generation and resourceVersion", async () => {
    const o = await store.create(deploy("web"));
    assert.match(o.metadata.uid!, /^[0-9a-f-]{36}$/);
    assert.match(o.metadata.creationTimestamp!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(o.metadata.generation, 1);
    assert.match(o.metadata.resourceVersion!, /^\d+$/);
    assert.deepEqual(await store.get({ gk: "apps/Deployment", namespace: "default", name: "web" }), o);
  });

  test("a write's NOTIFY names its resourceVersion and kinds; a delete names any kind (it may cascade)", async () => {
    const notices: string[] = [];
    const l = await db.sql.listen("flotilla_outbox", (p) => void notices.push(p));
    try {
      const [a] = await Promise.all([store.create(cm("notice-a")), store.create(deploy("notice-d"))]);
      await store.delete({ gk: "/ConfigMap", namespace: "default", name: "notice-a" });
      await eventually(() => notices.length >= 2, { timeoutMs: 5000 });
      const written = notices.map(parseOutboxNotice);
      assert.ok(written.some((n) => n.rv === BigInt(a!.metadata.resourceVersion!) && n.kinds?.includes("/ConfigMap")), JSON.stringify(notices));
      assert.ok(written.every((n) => n.rv !== undefined));
      assert.deepEqual(written.at(-1)!.kinds, undefined, "the delete's notice is for any kind");
    } finally {
      await l.unlisten();
    }
  });

  test("a write whose expected resourceVersion is no number is a Conflict, and the writes batched with it succeed", async () => {
    const made = await Promise.all(["rv-a", "rv-b", "rv-c"].map((n) => store.create(cm(n))));
    const results = await Promise.allSettled([
      store.update({ ...made[0]!, data: { a: "2" }, metadata: { ...made[0]!.metadata, resourceVersion: "abc" } }),
      store.delete({ gk: "/ConfigMap", namespace: "default", name: "rv-b" }, { resourceVersion: "99999999999999999999" }),
      store.update({ ...made[2]!, data: { a: "2" } }),
      store.delete({ gk: "/ConfigMap", namespace: "default", name: "rv-gone" }, { resourceVersion: "-1" }),
    ]);
    assert.deepEqual(
      results.map((r) => (r.status === "fulfilled" ? "ok" : (r.reason as Error).name)),
      ["ConflictError", "ConflictError", "ok", "NotFoundError"],
    );
    assert.deepEqual((await store.get({ gk: "/ConfigMap", namespace: "default", name: "rv-a" }))!.data, { a: "1" });
  });

  test("updateWithStatus writes the spec and the status in one change, with one generation step", async () => {
    const o = await store.create(deploy("both", 1));
    const [{ n: before }] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM outbox WHERE name = 'both'`;
    const w = await store.updateWithStatus({ ...o, spec: { replicas: 2 }, status: { observedGeneration: 2 } });
    assert.deepEqual([w.metadata.generation, w.spec, w.status], [2, { replicas: 2 }, { observedGeneration: 2 }]);
    const [{ n: after }] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM outbox WHERE name = 'both'`;
    assert.equal(after - before, 1);
    await assert.rejects(store.updateWithStatus({ ...o, status: {} }), { name: "ConflictError" });
  });

  test("reads and writes issued together are answered each on its own, missing objects included", async () => {
    const made = await Promise.all(Array.from({ length: 40 }, (_, i) => store.create(cm(`batch-${i}`))));
    const read = await Promise.all([...made.map((m) => store.get({ gk: "/ConfigMap", namespace: "default", name: m.metadata.name! })), store.get({ gk: "/ConfigMap", namespace: "default", name: "nope" })]);
    assert.deepEqual(read.slice(0, 40), made);
    assert.equal(read[40], undefined);
    // one write in the batch loses its check; the others still land
    const results = await Promise.allSettled(made.map((m, i) => store.update({ ...m, data: { a: String(i) }, metadata: { ...m.metadata, resourceVersion: i === 7 ? "1" : m.metadata.resourceVersion } })));
    assert.deepEqual(results.map((r, i) => (r.status === "fulfilled" ? "ok" : (r.reason as Error).name + i)).filter((x) => x !== "ok"), ["ConflictError7"]);
  });

  test("lists by label made together share statements, each answered on its own in (namespace, name) order", async () => {
    let lists = 0;
    const counted = new ObjectStore(db.sql, { onStatement: (s) => s === "list" && lists++ });
    const made = ["lb-b", "lb-a"].flatMap((ns) => Array.from({ length: 30 }, (_, i) => ({ ...cm(`lb-${i}`), metadata: { name: `lb-${i}`, namespace: ns, labels: { set: `s${i % 10}`, tier: i % 2 ? "odd" : "even" } } })));
    await Promise.all(made.map((m) => store.create(m)));
    const names = (r: { items: KubeObject[] }) => r.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
    const want = (set: number, ns?: string, odd?: boolean) =>
      made
        .filter((m) => m.metadata.labels.set === `s${set}` && (!ns || m.metadata.namespace === ns) && (odd === undefined || (m.metadata.labels.tier === "odd") === odd))
        .map((m) => `${m.metadata.namespace}/${m.metadata.name}`)
        .sort();
    const asked = Array.from({ length: 10 }, (_, i) => i);
    const [all, inA, oddOnly, none] = await Promise.all([
      Promise.all(asked.map((i) => counted.list("/ConfigMap", { labelSelector: `set=s${i}` }))),
      Promise.all(asked.map((i) => counted.list("/ConfigMap", { namespace: "lb-a", labelSelector: `set=s${i}` }))),
      Promise.all(asked.map((i) => counted.list("/ConfigMap", { labelSelector: `set=s${i},tier!=even` }))),
      counted.list("apps/Deployment", { labelSelector: "set=s1" }),
    ]);
    for (const i of asked) {
      assert.deepEqual(names(all[i]!), want(i));
      assert.deepEqual(names(inA[i]!), want(i, "lb-a"));
      assert.deepEqual(names(oddOnly[i]!), want(i, undefined, true));
    }
    assert.deepEqual(none.items, []);
    assert.ok(lists < 31, `31 lists in ${lists} statements`);
    assert.ok(all.every((r) => /^\d+$/.test(r.resourceVersion)));
  });

  test("a second create of the same name is AlreadyExists and writes nothing", async () => {
    const before = await db.sql`SELECT count(*)::int AS n FROM outbox`;
    await assert.rejects(store.create(deploy("web")), { name: "AlreadyExistsError" });
    const afterRows = await db.sql`SELECT count(*)::int AS n FROM outbox`;
    assert.equal(afterRows[0].n, before[0].n);
  });

  test("generation moves on spec change only; resourceVersion on every write", async () => {
    const o = (await store.get({ gk: "apps/Deployment", namespace: "default", name: "web" }))!;
    const labelled = await store.update({ ...o, metadata: { ...o.metadata, labels: { app: "web", x: "y" } } });
    assert.equal(labelled.metadata.generation, 1);
    assert.notEqual(labelled.metadata.resourceVersion, o.metadata.resourceVersion);
    const scaled = await store.update({ ...labelled, spec: { replicas: 3 } });
    assert.equal(scaled.metadata.generation, 2);
    const status = await store.updateStatus({ ...scaled, status: { readyReplicas: 3 } });
    assert.equal(status.metadata.generation, 2);
    assert.deepEqual(status.status, { readyReplicas: 3 });
    const specAgain = await store.update({ ...status, spec: { replicas: 3 }, status: { readyReplicas: 0 } });
    assert.deepEqual(specAgain.status, { readyReplicas: 3 }, "update keeps the stored status");
    assert.equal(specAgain.metadata.resourceVersion, status.metadata.resourceVersion, "a no-op update writes nothing");
  });

  test("a stale resourceVersion is a Conflict", async () => {
    const o = (await store.get({ gk: "apps/Deployment", namespace: "default", name: "web" }))!;
    await store.update({ ...o, spec: { replicas: 4 } });
    await assert.rejects(store.update({ ...o, spec: { replicas: 5 } }), { name: "ConflictError" });
    const now = (await store.get({ gk: "apps/Deployment", namespace: "default", name: "web" }))!;
    assert.equal(now.spec.replicas, 4);
  });

  test("update of a missing object is NotFound", async () => {
    await assert.rejects(store.update(deploy("missing")), { name: "NotFoundError" });
  });

  test("delete with finalizers marks the object; removing the last finalizer deletes it", async () => {
    const o = await store.create(cm("fin", { a: "1" }, { finalizers: ["example.com/hold"] }));
    const marked = (await store.delete({ gk: "/ConfigMap", namespace: "default", name: "fin" }))!;
    assert.ok(marked.metadata.deletionTimestamp);
    assert.ok(await store.get({ gk: "/ConfigMap", namespace: "default", name: "fin" }), "still there while a finalizer holds it");
    await store.update({ ...marked, metadata: { ...marked.metadata, finalizers: [] } });
    assert.equal(await store.get({ gk: "/ConfigMap", namespace: "default", name: "fin" }), undefined);
    assert.ok(o.metadata.uid);
  });

  test("deleting an owner cascades to its dependents, honouring their finalizers", async () => {
    const owner = await store.create(deploy("owner"));
    const ownerRefs = [{ apiVersion: "apps/v1", kind: "Deployment", name: "owner", uid: owner.metadata.uid! }];
    await store.create(cm("child-a", {}, { ownerReferences: ownerRefs }));
    await store.create(cm("child-b", {}, { ownerReferences: ownerRefs, finalizers: ["example.com/hold"] }));
    const grand = await store.create(cm("grandchild", {}, {}));
    const childA = (await store.get({ gk: "/ConfigMap", namespace: "default", name: "child-a" }))!;
    await store.update({ ...grand, metadata: { ...grand.metadata, ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "child-a", uid: childA.metadata.uid! }] } });
    await store.delete({ gk: "apps/Deployment", namespace: "default", name: "owner" });
    assert.equal(await store.get({ gk: "/ConfigMap", namespace: "default", name: "child-a" }), undefined);
    assert.equal(await store.get({ gk: "/ConfigMap", namespace: "default", name: "grandchild" }), undefined);
    const b = await store.get({ gk: "/ConfigMap", namespace: "default", name: "child-b" });
    assert.ok(b?.metadata.deletionTimestamp, "a dependent with a finalizer is marked, not removed");
  });

  test("list filters by namespace, label selector and secondary index", async () => {
    await store.create({ ...deploy("a1", 7), metadata: { name: "a1", namespace: "other", labels: { app: "a", tier: "web" } } });
    await store.create({ ...deploy("a2", 7), metadata: { name: "a2", namespace: "other", labels: { app: "a", tier: "api" } } });
    const byNs = await store.list("apps/Deployment", { namespace: "other" });
    assert.deepEqual(byNs.items.map((o) => o.metadata.name), ["a1", "a2"]);
    const bySel = await store.list("apps/Deployment", { labelSelector: "app=a,tier notin (web)" });
    assert.deepEqual(bySel.items.map((o) => o.metadata.name), ["a2"]);
    const byIdx = await store.list("apps/Deployment", { index: "replicas:7" });
    assert.deepEqual(byIdx.items.map((o) => o.metadata.name), ["a1", "a2"]);
    assert.match(byIdx.resourceVersion, /^\d+$/);
  });

  test("an outbox row is written iff the change committed", async () => {
    const count = async () => (await db.sql`SELECT count(*)::int AS n FROM outbox WHERE name = 'txn'`)[0].n as number;
    await store.create(cm("txn"));
    assert.equal(await count(), 1);
    const o = (await store.get({ gk: "/ConfigMap", namespace: "default", name: "txn" }))!;
    await assert.rejects(store.update({ ...o, metadata: { ...o.metadata, resourceVersion: "1" }, data: { b: "2" } }), { name: "ConflictError" });
    assert.equal(await count(), 1, "a rejected write leaves no outbox row");
    await store.update({ ...o, data: { b: "2" } });
    assert.equal(await count(), 2);
  });

  test("concurrent read-modify-writes with mutate lose nothing", async () => {
    await store.create(cm("counter", { n: "0" }));
    await Promise.all(
      Array.from({ length: 20 }, () =>
        store.mutate({ gk: "/ConfigMap", namespace: "default", name: "counter" }, (c) => ({ ...c, data: { n: String(Number((c.data as { n: string }).n) + 1) } }), { attempts: 100 }),
      ),
    );
    const c = (await store.get({ gk: "/ConfigMap", namespace: "default", name: "counter" }))!;
    assert.equal((c.data as { n: string }).n, "20");
  });

  test("mutateWritten decides again on the object it re-reads after a conflict, and says whether it wrote", async () => {
    const ref = { gk: "/ConfigMap", namespace: "default", name: "mw" };
    const first = await store.create<KubeObject>(cm("mw", { n: "0" }));
    // someone else writes after the caller read `first`
    await store.update({ ...first, data: { n: "5" } });
    const seen: string[] = [];
    const r = await store.mutateWritten<KubeObject>(
      ref,
      async (c) => {
        seen.push((c.data as { n: string }).n);
        await new Promise((res) => setTimeout(res, 1));
        return { ...c, data: { n: String(Number((c.data as { n: string }).n) + 1) } };
      },
      { first },
    );
    assert.deepEqual(seen, ["0", "5"], "the stale copy first, then the re-read one");
    assert.equal(r.written, true);
    assert.equal((r.obj?.data as { n: string }).n, "6");
    const same = await store.mutateWritten<KubeObject>(ref, () => undefined);
    assert.equal(same.written, false);
    assert.equal(same.obj?.metadata.resourceVersion, r.obj?.metadata.resourceVersion, "nothing to do: the current object");
    const gone = await store.mutateWritten<KubeObject>({ ...ref, name: "nope" }, (c) => c);
    assert.deepEqual(gone, { obj: undefined, written: false });
  });

  test("upsert creates, updates, leaves alone, and decides again when another writer got there first", async () => {
    const ref = { gk: "/ConfigMap", namespace: "default", name: "up" };
    const bump = (c: KubeObject | undefined) => (c ? { ...c, data: { n: String(Number((c.data as { n: string }).n) + 1) } } : cm("up", { n: "0" }));
    const created = await store.upsert<KubeObject>(ref, bump);
    assert.equal(created.written, "created");
    assert.equal((created.obj?.data as { n: string }).n, "0");
    const updated = await store.upsert<KubeObject>(ref, bump);
    assert.equal(updated.written, "updated");
    assert.equal((updated.obj?.data as { n: string }).n, "1");
    const same = await store.upsert<KubeObject>(ref, () => undefined);
    assert.deepEqual(same, { obj: updated.obj, written: undefined }, "nothing to do: the current object");
    // told the object is absent (first: null) while another writer made it: the create fails and the update is decided on the stored one
    const seen: Array<string | undefined> = [];
    const raced = await store.upsert<KubeObject>(
      { ...ref, name: "up2" },
      async (c) => {
        seen.push(c && (c.data as { n: string }).n);
        if (!c) await store.create(cm("up2", { n: "7" }));
        return c ? bump(c) : cm("up2", { n: "0" });
      },
      { first: null },
    );
    assert.deepEqual(seen, [undefined, "7"], "the create lost the race: decided again on the stored object");
    assert.equal(raced.written, "updated");
    assert.equal((raced.obj?.data as { n: string }).n, "8");
    // twenty writers creating-or-bumping one object lose nothing
    await Promise.all(Array.from({ length: 20 }, () => store.upsert<KubeObject>({ ...ref, name: "up3" }, (c) => (c ? bump(c) : cm("up3", { n: "1" })), { attempts: 100 })));
    assert.equal(((await store.get<KubeObject>({ ...ref, name: "up3" }))!.data as { n: string }).n, "20");
  });

  test("watch resumes from a resourceVersion and sees every later change in order", async () => {
    const listed = await store.list("/ConfigMap", { namespace: "w" });
    const created = await store.create<KubeObject>({ ...cm("w1"), metadata: { name: "w1", namespace: "w" } });
    const updated = await store.update({ ...created, data: { a: "2" } });
    await store.delete({ gk: "/ConfigMap", namespace: "w", name: "w1" });
    const events: WatchEvent[] = [];
    const ac = new AbortController();
    const run = (async () => {
      for await (const e of await store.watch("/ConfigMap", { namespace: "w", resourceVersion: listed.resourceVersion, signal: ac.signal })) events.push(e);
    })();
    await eventually(() => events.length >= 3);
    ac.abort();
    await run;
    assert.deepEqual(events.map((e) => e.type), ["ADDED", "MODIFIED", "DELETED"]);
    assert.equal(events[1]!.object.metadata.resourceVersion, updated.metadata.resourceVersion);
    // resume after the first event: only the later two
    const resumed: WatchEvent[] = [];
    const ac2 = new AbortController();
    const run2 = (async () => {
      for await (const e of await store.watch("/ConfigMap", { namespace: "w", resourceVersion: created.metadata.resourceVersion, signal: ac2.signal })) resumed.push(e);
    })();
    await eventually(() => resumed.length >= 2);
    ac2.abort();
    await run2;
    assert.deepEqual(resumed.map((e) => e.type), ["MODIFIED", "DELETED"]);
  });

  test("a live watch sees a change made after it started", async () => {
    const got: WatchEvent[] = [];
    const ac = new AbortController();
    const run = (async () => {
      for await (const e of await store.watch("apps/Deployment", { labelSelector: "app=live", signal: ac.signal })) got.push(e);
    })();
    await new Promise((r) => setTimeout(r, 100));
    await store.create(deploy("ignored"));
    await store.create({ ...deploy("live"), metadata: { name: "live", namespace: "default", labels: { app: "live" } } });
    await eventually(() => got.length >= 1);
    ac.abort();
    await run;
    assert.deepEqual(got.map((e) => e.object.metadata.name), ["live"]);
  });

  test("a watch of a kind that rarely changes moves past other kinds' rows and still gets every event, over more than a poll's batch", async () => {
    const got: string[] = [];
    const ac = new AbortController();
    const run = (async () => {
      for await (const e of await store.watch("/ConfigMap", { namespace: "rare", signal: ac.signal })) got.push(e.object.metadata.name!);
    })();
    // many rows of another kind in between (the watch's cursor moves past them without events)
    await Promise.all(Array.from({ length: 520 }, (_, i) => store.create({ ...deploy(`other-${i}`), metadata: { name: `other-${i}`, namespace: "busy" } })));
    await store.create({ ...cm("late"), metadata: { name: "late", namespace: "rare" } });
    await eventually(() => got.length >= 1);
    // more matching rows at once than one poll reads
    await Promise.all(Array.from({ length: 510 }, (_, i) => store.create({ ...cm(`many-${i}`), metadata: { name: `many-${i}`, namespace: "rare" } })));
    await eventually(() => got.length >= 511, { timeoutMs: 20_000 });
    await sleep(300);
    ac.abort();
    await run;
    assert.equal(got[0], "late");
    assert.equal(got.length, 511, "every event once");
    assert.equal(new Set(got).size, 511);
  });

  test("a watch delivers in numeric resourceVersion order when the versions grow a digit", async () => {
    // rows as writes long ago would have left them: 998, 999, 1000, 1001 (as text, "1000" < "999")
    const uid = "5f0c8ec4-0b0e-4b55-9d49-1a7e9d1c2a11";
    for (const rv of [998, 999, 1000, 1001]) {
      const object = { ...cm(`digits-${rv}`), metadata: { name: `digits-${rv}`, namespace: "digits", resourceVersion: String(rv) } };
      await db.sql`INSERT INTO outbox (rv, gk, namespace, name, uid, type, object) VALUES (${rv}, '/ConfigMap', 'digits', ${`digits-${rv}`}, ${uid}, 'ADDED', ${db.sql.json(object)})`;
    }
    const got: string[] = [];
    const ac = new AbortController();
    const run = (async () => {
      for await (const e of await store.watch("/ConfigMap", { namespace: "digits", resourceVersion: "997", signal: ac.signal })) got.push(e.object.metadata.resourceVersion!);
    })();
    await eventually(() => got.length >= 4);
    ac.abort();
    await run;
    assert.deepEqual(got, ["998", "999", "1000", "1001"]);
  });

  test("a watch from before the pruned history is Gone", async () => {
    await ageOutbox(db.sql);
    const pruned = await store.pruneOutbox(60_000);
    assert.ok(pruned > 0);
    await assert.rejects(store.watch("/ConfigMap", { resourceVersion: "1" }), { name: "GoneError" });
  });
});

describe("paged lists", () => {
  let db: TestDatabase;
  let store: ObjectStore;
  const NAMESPACES = ["ns-a", "ns-b", "ns-c"];
  const PER_NS = 400;
  const CM = "/ConfigMap";
  const names = (items: KubeObject[]) => items.map((o) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`);
  // every object of the kind, in (namespace, name) order
  const all: string[] = [];
  before(async () => {
    db = await freshDatabase();
    store = new ObjectStore(db.sql);
    const objs: KubeObject[] = [];
    for (const ns of NAMESPACES) {
      for (let i = 0; i < PER_NS; i++) {
        const name = `cm-${String(i).padStart(4, "0")}`;
        objs.push({ ...cm(name), metadata: { name, namespace: ns, labels: { tier: i % 7 === 0 ? "seven" : "other", parity: i % 2 === 0 ? "even" : "odd" } } });
        all.push(`${ns}/${name}`);
      }
    }
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < objs.length) await store.create(objs[next++]!);
    }));
    for (let i = 0; i < 30; i++) await store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: `team-${String(i).padStart(2, "0")}` } });
  });
  after(async () => db.drop());

  /** Follows `continue` to the end, checking each page as a Kubernetes client may rely on. */
  async function pages(gk: string, opts: ListOptions & { limit: number }) {
    const out: KubeObject[] = [];
    const sizes: number[] = [];
    let first: ListResult<KubeObject> | undefined;
    let token: string | undefined;
    do {
      const page = await store.list(gk, { ...opts, continue: token });
      first ??= page;
      assert.equal(page.resourceVersion, first.resourceVersion, "every page carries the first page's resourceVersion");
      assert.ok(page.items.length <= opts.limit);
      if (page.continue) assert.equal(page.items.length, opts.limit, "only the last page may be short");
      else assert.equal(page.remainingItemCount, undefined);
      out.push(...page.items);
      sizes.push(page.items.length);
      token = page.continue;
    } while (token);
    return { items: out, sizes, first: first! };
  }

  test("1,200 objects page by 100 in (namespace, name) order, with the remaining count", async () => {
    const { items, sizes, first } = await pages(CM, { limit: 100 });
    assert.deepEqual(names(items), all);
    assert.deepEqual(sizes, Array(12).fill(100));
    assert.equal(first.remainingItemCount, 1100);
    const whole = await store.list(CM);
    assert.deepEqual(names(whole.items), all, "without a limit the list is whole");
    assert.equal(whole.continue, undefined);
  });

  test("the remaining count goes down page by page and is unset on the last page", async () => {
    const p1 = await store.list(CM, { limit: 500 });
    const p2 = await store.list(CM, { limit: 500, continue: p1.continue });
    const p3 = await store.list(CM, { limit: 500, continue: p2.continue });
    assert.deepEqual([p1.remainingItemCount, p2.remainingItemCount, p3.remainingItemCount], [700, 200, undefined]);
    assert.deepEqual([p1.items.length, p2.items.length, p3.items.length], [500, 500, 200]);
    assert.equal(p3.continue, undefined);
  });

  test("a limit equal to the list's size gives one page and no continue", async () => {
    const p = await store.list(CM, { namespace: "ns-b", limit: PER_NS });
    assert.equal(p.items.length, PER_NS);
    assert.equal(p.continue, undefined);
    const zero = await store.list(CM, { namespace: "ns-b", limit: 0 });
    assert.equal(zero.items.length, PER_NS, "limit 0 is no limit");
  });

  test("label selectors fill every page but the last, in SQL or in the application", async () => {
    for (const sel of ["tier=seven", "tier in (seven),parity notin (odd)", "!missing,parity!=even"]) {
      const reqs = parseSelector(sel);
      const expected = all.filter((_, i) => {
        const n = i % PER_NS;
        return matchesRequirements({ tier: n % 7 === 0 ? "seven" : "other", parity: n % 2 === 0 ? "even" : "odd" }, reqs);
      });
      for (const limit of [1, 10, 37]) {
        const { items, sizes, first } = await pages(CM, { labelSelector: sel, limit });
        assert.deepEqual(names(items), expected, `${sel} by ${limit}`);
        assert.equal(sizes.length, Math.max(1, Math.ceil(expected.length / limit)), `${sel} by ${limit}: pages are full`);
        assert.equal(first.remainingItemCount, undefined, "unknown with a selector, as Kubernetes");
      }
    }
  });

  test("a namespace pages within that namespace", async () => {
    const { items, sizes } = await pages(CM, { namespace: "ns-c", limit: 150 });
    assert.deepEqual(names(items), all.filter((n) => n.startsWith("ns-c/")));
    assert.deepEqual(sizes, [150, 150, 100]);
  });

  test("a cluster-scoped kind pages too", async () => {
    const { items, sizes, first } = await pages("/Namespace", { limit: 7 });
    assert.deepEqual(names(items), Array.from({ length: 30 }, (_, i) => `/team-${String(i).padStart(2, "0")}`));
    assert.deepEqual(sizes, [7, 7, 7, 7, 2]);
    assert.equal(first.remainingItemCount, 23);
  });

  test("later pages read current data after the last key", async () => {
    const p1 = await store.list(CM, { namespace: "ns-a", limit: 10 });
    await store.create({ ...cm("cm-0000a"), metadata: { name: "cm-0000a", namespace: "ns-a" } }); // before the page's end: not seen
    await store.create({ ...cm("cm-0010a"), metadata: { name: "cm-0010a", namespace: "ns-a" } }); // after it: seen
    await store.delete({ gk: CM, namespace: "ns-a", name: "cm-0011" });
    const p2 = await store.list(CM, { namespace: "ns-a", limit: 3, continue: p1.continue });
    assert.deepEqual(names(p2.items), ["ns-a/cm-0010", "ns-a/cm-0010a", "ns-a/cm-0012"]);
    assert.equal(p2.resourceVersion, p1.resourceVersion);
    const rest = await store.list(CM, { namespace: "ns-a", continue: p2.continue });
    assert.equal(rest.items.length, PER_NS - 13, "a continue without a limit returns the rest");
    assert.equal(rest.continue, undefined);
    await store.delete({ gk: CM, namespace: "ns-a", name: "cm-0000a" });
    await store.delete({ gk: CM, namespace: "ns-a", name: "cm-0010a" });
    await store.create({ ...cm("cm-0011"), metadata: { name: "cm-0011", namespace: "ns-a", labels: { tier: "other", parity: "odd" } } });
  });

  test("the continue token is opaque base64url JSON of the resourceVersion and the last key", async () => {
    const p = await store.list(CM, { limit: 2 });
    assert.match(p.continue!, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(JSON.parse(Buffer.from(p.continue!, "base64url").toString()), { rv: p.resourceVersion, ns: "ns-a", name: "cm-0001" });
  });

  test("a malformed continue token is a BadRequest naming the parameter", async () => {
    const bad = ["garbage!", Buffer.from("{not json").toString("base64url"), Buffer.from(JSON.stringify({ rv: "x", ns: "", name: "a" })).toString("base64url"), Buffer.from(JSON.stringify({ rv: "5" })).toString("base64url")];
    for (const token of bad) {
      await assert.rejects(store.list(CM, { limit: 5, continue: token }), (e: BadRequestError) => e.name === "BadRequestError" && e.causes[0]?.field === "continue", token);
      await assert.rejects(store.listStream(CM, { continue: token }), { name: "BadRequestError" });
    }
  });

  test("an invalid limit is Invalid naming the parameter", async () => {
    for (const limit of [-1, 1.5, NaN, Infinity]) {
      await assert.rejects(store.list(CM, { limit }), (e: InvalidError) => e.name === "InvalidError" && e.causes[0]?.field === "limit", String(limit));
    }
  });

  test("listStream yields the whole list a batch at a time, from a continue token too", async () => {
    const stream = await store.listStream(CM, { batch: 7 });
    assert.match(stream.resourceVersion, /^\d+$/);
    const got: KubeObject[] = [];
    for await (const o of stream) got.push(o);
    assert.deepEqual(names(got), all);
    const sel: KubeObject[] = [];
    for await (const o of await store.listStream(CM, { labelSelector: "parity=odd,tier!=seven", namespace: "ns-b", batch: 50 })) sel.push(o);
    assert.deepEqual(names(sel), names((await store.list(CM, { labelSelector: "parity=odd,tier!=seven", namespace: "ns-b" })).items));
    const p = await store.list(CM, { limit: 1000 });
    const rest = await store.listStream(CM, { continue: p.continue });
    assert.equal(rest.resourceVersion, p.resourceVersion);
    const restItems: KubeObject[] = [];
    for await (const o of rest) restItems.push(o);
    assert.deepEqual(names(restItems), all.slice(1000));
  });

  test("a continue token older than the retained watch history is Gone", async () => {
    const p = await store.list(CM, { limit: 10 });
    const tokenRv = BigInt((JSON.parse(Buffer.from(p.continue!, "base64url").toString()) as { rv: string }).rv);
    // the history is pruned past the list's resourceVersion (set directly: whether pruning can go
    // that far depends on every transaction running on the server, other tests' included)
    await db.sql`UPDATE outbox_watermark SET pruned_rv = ${String(tokenRv + 1n)}::bigint`;
    try {
      await assert.rejects(store.list(CM, { limit: 10, continue: p.continue }), (e: Error) => e.name === "GoneError" && /continue parameter is too old/.test(e.message));
      await assert.rejects(store.listStream(CM, { continue: p.continue }), { name: "GoneError" });
      // up to the watermark itself the history is still there
      await db.sql`UPDATE outbox_watermark SET pruned_rv = ${String(tokenRv)}::bigint`;
      assert.equal((await store.list(CM, { limit: 10, continue: p.continue })).items.length, 10);
    } finally {
      await db.sql`UPDATE outbox_watermark SET pruned_rv = 0`;
    }
  });

  test("pruning raises the watermark, never to or past a resourceVersion a new list could get", async () => {
    await store.create({ ...cm("later"), metadata: { name: "later", namespace: "ns-z" } });
    await ageOutbox(db.sql);
    await store.pruneOutbox(60_000);
    const [{ pruned }] = await db.sql<{ pruned: string }[]>`SELECT pruned_rv::text AS pruned FROM outbox_watermark`;
    const fresh = await store.list(CM, { limit: 10 });
    assert.ok(BigInt(pruned) <= BigInt(fresh.resourceVersion), `watermark ${pruned}, new list at ${fresh.resourceVersion}`);
    assert.equal((await store.list(CM, { limit: 10, continue: fresh.continue })).items.length, 10, "a new list pages again");
  });
});
