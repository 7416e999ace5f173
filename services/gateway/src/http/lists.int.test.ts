import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { ListRequestSchema, ObjectService } from "@flotilla/proto";
import { grpcServiceDefinition } from "@flotilla/proto/grpc";
import { ObjectStore } from "@flotilla/store";
import { ageOutbox, eventually, freshDatabase, type TestDatabase } from "@flotilla/testkit";
import type { KubeObject } from "@flotilla/api";
import { bearer, grpcAuth, injectAsAdmin, testGatewayDeps } from "../access.test-support.js";
import { buildGateway, type Gateway } from "../app.js";

const WORKS = "/apis/work.karmada.io/v1alpha1/works";
const worksIn = (ns: string) => `/apis/work.karmada.io/v1alpha1/namespaces/${ns}/works`;
const CLUSTERS = "/apis/cluster.karmada.io/v1alpha1/clusters";

interface List {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: KubeObject[];
}

const work = (ns: string, i: number): KubeObject => ({
  apiVersion: "work.karmada.io/v1alpha1",
  kind: "Work",
  metadata: { name: `w-${String(i).padStart(3, "0")}`, namespace: ns, labels: { parity: i % 2 ? "odd" : "even" } },
  spec: { workload: { manifests: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}`, namespace: "default" }, data: { i: String(i) } }] } },
});

describe("lists through the gateway: limit, continue, streaming", () => {
  let db: TestDatabase;
  let store: ObjectStore;
  let gw: Gateway;
  let url: string;
  let grpcAddress: string;
  const keys: string[] = []; // every Work as ns/name, in list order
  before(async () => {
    db = await freshDatabase();
    store = new ObjectStore(db.sql);
    const objs: KubeObject[] = [];
    for (const [ns, n] of [["karmada-es-member1", 120], ["karmada-es-member2", 80]] as const) {
      for (let i = 0; i < n; i++) {
        objs.push(work(ns, i));
        keys.push(`${ns}/${objs.at(-1)!.metadata.name}`);
      }
    }
    for (let i = 0; i < 25; i++) objs.push({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: `member-${String(i).padStart(2, "0")}` }, spec: { apiEndpoint: `https://10.0.0.${i}:6443`, syncMode: "Push" } });
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < objs.length) await store.create(objs[next++]!);
    }));
    gw = buildGateway(testGatewayDeps(store));
    injectAsAdmin(gw.http);
    const addr = await gw.start({ host: "127.0.0.1", port: 0, grpcPort: 0 });
    url = addr.url;
    grpcAddress = addr.grpcAddress!;
  });
  after(async () => {
    await gw.stop();
    await db.drop();
  });
  const get = (path: string) => gw.http.inject({ method: "GET", url: path });
  const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`;

  /** Follows metadata.continue to the end; returns the items and each page's metadata. */
  async function follow(path: string, limit: number) {
    const items: KubeObject[] = [];
    const metas: List["metadata"][] = [];
    let token = "";
    do {
      const res = await get(`${path}${path.includes("?") ? "&" : "?"}limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ""}`);
      assert.equal(res.statusCode, 200, res.body);
      const l = res.json<List>();
      items.push(...l.items);
      metas.push(l.metadata);
      token = l.metadata.continue ?? "";
    } while (token);
    return { items, metas };
  }

  test("a namespaced list pages with continue and remainingItemCount", async () => {
    const { items, metas } = await follow(worksIn("karmada-es-member1"), 50);
    assert.deepEqual(items.map(keyOf), keys.slice(0, 120));
    assert.deepEqual(metas.map((m) => m.remainingItemCount), [70, 20, undefined]);
    assert.equal(new Set(metas.map((m) => m.resourceVersion)).size, 1, "every page has the first page's resourceVersion");
    const first = (await get(`${worksIn("karmada-es-member1")}?limit=50`)).json<List>();
    assert.equal(first.kind, "WorkList");
    assert.deepEqual(Object.keys(first.metadata), ["resourceVersion", "continue", "remainingItemCount"]);
  });

  test("lists across namespaces and of a cluster-scoped kind page too", async () => {
    const all = await follow(WORKS, 33);
    assert.deepEqual(all.items.map(keyOf), keys);
    assert.equal(all.metas.length, Math.ceil(200 / 33));
    const clusters = await follow(CLUSTERS, 10);
    assert.deepEqual(clusters.items.map((c) => c.metadata.name), Array.from({ length: 25 }, (_, i) => `member-${String(i).padStart(2, "0")}`));
    assert.deepEqual(clusters.metas.map((m) => m.remainingItemCount), [15, 5, undefined]);
  });

  test("a label selector pages with full pages and no remaining count", async () => {
    const { items, metas } = await follow(`${WORKS}?labelSelector=${encodeURIComponent("parity notin (even)")}`, 7);
    const odd = keys.filter((k) => Number(k.slice(-3)) % 2 === 1);
    assert.deepEqual(items.map(keyOf), odd);
    assert.equal(metas.length, Math.ceil(odd.length / 7));
    assert.ok(metas.every((m) => m.remainingItemCount === undefined));
  });

  test("a list without a limit is streamed, and is the same List a single page would be", async () => {
    const res = await fetch(`${url}${WORKS}`, { headers: bearer() });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("transfer-encoding"), "chunked");
    assert.equal(res.headers.get("content-length"), null);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    const streamed = await res.text();
    const l = JSON.parse(streamed) as List;
    assert.deepEqual(l.items.map(keyOf), keys);
    const page = (await get(`${WORKS}?limit=1000`)).json<List>();
    assert.equal(page.metadata.continue, undefined);
    assert.deepEqual(l.items, page.items);
    assert.deepEqual({ ...l, metadata: {} }, { ...page, metadata: {} });
    assert.deepEqual(Object.keys(l), ["apiVersion", "kind", "metadata", "items"]);
    const empty = (await get(worksIn("nobody"))).json<List>();
    assert.deepEqual(empty.items, []);
    assert.equal(empty.kind, "WorkList");
    const zero = (await get(`${worksIn("karmada-es-member2")}?limit=0`)).json<List>();
    assert.equal(zero.items.length, 80, "limit=0 is the whole list");
    const p150 = (await get(`${WORKS}?limit=150`)).json<List>();
    const rest = (await get(`${WORKS}?continue=${encodeURIComponent(p150.metadata.continue!)}`)).json<List>();
    assert.equal(rest.metadata.resourceVersion, p150.metadata.resourceVersion);
    assert.deepEqual(rest.items.map(keyOf), keys.slice(150), "a continue without a limit streams the rest");
  });

  test("a bad limit or continue is a Status naming the parameter, never a 500", async () => {
    for (const limit of ["-1", "abc", "1.5", "10x", "99999999999999999999"]) {
      const res = await get(`${WORKS}?limit=${limit}`);
      assert.equal(res.statusCode, 422, `limit=${limit}: ${res.body}`);
      assert.equal(res.json().reason, "Invalid");
      assert.equal(res.json().details.causes[0].field, "limit");
    }
    for (const token of ["not-a-token", Buffer.from("{}").toString("base64url")]) {
      for (const limit of ["", "&limit=5"]) {
        const res = await get(`${WORKS}?continue=${token}${limit}`);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().reason, "BadRequest");
        assert.equal(res.json().details.causes[0].field, "continue");
      }
    }
    const sel = await get(`${WORKS}?labelSelector=${encodeURIComponent("a in (")}`);
    assert.equal(sel.statusCode, 400);
  });

  test("the gRPC List pages with limit and continue", async () => {
    const Client = grpc.makeGenericClientConstructor(grpcServiceDefinition(ObjectService), "ObjectService");
    const client = new Client(grpcAddress, grpc.credentials.createInsecure()) as grpc.Client & Record<string, (...a: unknown[]) => unknown>;
    const list = (req: unknown) =>
      new Promise<{ resourceVersion: string; items: { object: { value: { metadata?: { name?: string } } } }[]; continue: string; remainingItemCount?: bigint }>((resolve, reject) =>
        (client.list as (r: unknown, md: grpc.Metadata, cb: (e: Error | null, v: never) => void) => void).call(client, req, grpcAuth(), (e, v) => (e ? reject(e) : resolve(v))),
      );
    const key = { apiVersion: "work.karmada.io/v1alpha1", kind: "Work", namespace: "karmada-es-member2", name: "" };
    const names: string[] = [];
    const remaining: Array<bigint | undefined> = [];
    let token = "";
    do {
      const r = await list(create(ListRequestSchema, { key, limit: 30n, continue: token }));
      names.push(...r.items.map((i) => i.object.value.metadata?.name ?? ""));
      remaining.push(r.remainingItemCount);
      token = r.continue;
    } while (token);
    assert.deepEqual(names, keys.slice(120).map((k) => k.split("/")[1]));
    assert.deepEqual(remaining, [50n, 20n, undefined]);
    const whole = await list(create(ListRequestSchema, { key }));
    assert.equal(whole.items.length, 80);
    assert.equal(whole.continue, "");
    await assert.rejects(list(create(ListRequestSchema, { key, limit: -1n })), (e: grpc.ServiceError) => e.code === grpc.status.INVALID_ARGUMENT);
    await assert.rejects(list(create(ListRequestSchema, { key, limit: 5n, continue: "nope" })), (e: grpc.ServiceError) => e.code === grpc.status.INVALID_ARGUMENT);
    client.close();
  });

  // last: it prunes the watch history, which expires every earlier token
  test("a continue token older than the watch history is 410 Expired", async () => {
    const first = (await get(`${WORKS}?limit=10`)).json<List>();
    await store.create(work("karmada-es-member3", 0));
    await ageOutbox(db.sql);
    const token = `${WORKS}?continue=${encodeURIComponent(first.metadata.continue!)}`;
    // a transaction open anywhere on the server (another test's database too) holds the prune back until it ends
    await eventually(async () => (await store.pruneOutbox(60_000), (await get(token)).statusCode === 410), { timeoutMs: 10_000, message: "the outbox was not pruned" });
    for (const limit of ["&limit=10", ""]) {
      const res = await get(`${token}${limit}`);
      assert.equal(res.statusCode, 410, res.body);
      assert.equal(res.json().reason, "Expired");
      assert.match(res.json().message, /continue parameter is too old/);
    }
  });
});
