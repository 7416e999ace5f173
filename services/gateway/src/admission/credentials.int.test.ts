import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { GetRequestSchema, ListRequestSchema, ObjectService } from "@flotilla/proto";
import { grpcServiceDefinition } from "@flotilla/proto/grpc";
import { ObjectStore } from "@flotilla/store";
import { freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { bearer, grpcAuth, injectAsAdmin, testGatewayDeps } from "../access.test-support.js";
import { buildGateway, type Gateway } from "../app.js";
import { InlineTokenAnnotation, InlineCABundleAnnotation } from "./credentials.js";

const dataOf = (o: unknown): Record<string, string> | undefined => (o as { data?: Record<string, string> } | undefined)?.data;

const TOKEN = "s3cr3t-member-token-value";
const TOKEN_B64 = Buffer.from(TOKEN).toString("base64");
const CA = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----";
const SECRETS = "/api/v1/namespaces/karmada-cluster/secrets";
const CLUSTERS = "/apis/cluster.karmada.io/v1alpha1/clusters";

/** Fails when any credential value, plain or base64, appears in `text`. */
function assertClean(text: string, where: string) {
  for (const needle of [TOKEN, TOKEN_B64, "MIIBfake", Buffer.from(CA).toString("base64"), "rotated-token", Buffer.from("rotated-token").toString("base64")]) {
    assert.ok(!text.includes(needle), `${where} leaks ${needle}: ${text.slice(0, 400)}`);
  }
}

describe("member credentials through the gateway", () => {
  let db: TestDatabase;
  let store: ObjectStore;
  let gw: Gateway;
  let url: string;
  let grpcAddress: string;
  before(async () => {
    db = await freshDatabase();
    store = new ObjectStore(db.sql);
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
  const inject = async (method: string, path: string, body?: unknown, contentType = "application/json") => {
    const res = await gw.http.inject({ method: method as "GET", url: path, payload: body === undefined ? undefined : JSON.stringify(body), headers: body === undefined ? {} : { "content-type": contentType } });
    assertClean(res.body, `${method} ${path}`);
    return res;
  };

  test("a Secret's values never come back (create, get, list, update, patch, delete), while the store keeps them", async () => {
    const c = await inject("POST", SECRETS, { apiVersion: "v1", kind: "Secret", metadata: { name: "m1" }, type: "Opaque", data: { token: TOKEN_B64 }, stringData: { caBundle: CA } });
    assert.equal(c.statusCode, 201, c.body);
    assert.deepEqual(c.json().data, { token: "", caBundle: "" });
    assert.equal(c.json().stringData, undefined, "stringData is folded into data");
    const stored = (await store.get({ gk: "/Secret", namespace: "karmada-cluster", name: "m1" }))!;
    assert.deepEqual(stored.data, { token: TOKEN_B64, caBundle: Buffer.from(CA).toString("base64") });

    const g = await inject("GET", `${SECRETS}/m1`);
    assert.deepEqual(g.json().data, { token: "", caBundle: "" });
    assert.deepEqual((await inject("GET", SECRETS)).json().items[0].data, { token: "", caBundle: "" });
    assert.deepEqual((await inject("GET", "/api/v1/secrets")).json().items[0].data, { token: "", caBundle: "" });

    // what was read can be written back (a label change) without wiping the credential
    const obj = g.json();
    obj.metadata.labels = { team: "a" };
    const u = await inject("PUT", `${SECRETS}/m1`, obj);
    assert.equal(u.statusCode, 200, u.body);
    assert.deepEqual((await store.get({ gk: "/Secret", namespace: "karmada-cluster", name: "m1" }))!.data, stored.data);

    const p = await inject("PATCH", `${SECRETS}/m1`, { metadata: { annotations: { x: "y" } } }, "application/merge-patch+json");
    assert.equal(p.statusCode, 200, p.body);
    assert.deepEqual((await store.get({ gk: "/Secret", namespace: "karmada-cluster", name: "m1" }))!.data, stored.data);

    // rotating a value works; the new value is not echoed either
    const r = await inject("PATCH", `${SECRETS}/m1`, { stringData: { token: "rotated-token" } }, "application/merge-patch+json");
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(dataOf(await store.get({ gk: "/Secret", namespace: "karmada-cluster", name: "m1" }))?.token, Buffer.from("rotated-token").toString("base64"));

    const d = await inject("DELETE", `${SECRETS}/m1`);
    assert.equal(d.statusCode, 200);
  });

  test("a Cluster with an inline token stores it in a Secret it owns, and neither the Cluster nor the Secret shows it", async () => {
    const c = await inject("POST", CLUSTERS, {
      apiVersion: "cluster.karmada.io/v1alpha1",
      kind: "Cluster",
      metadata: { name: "member9", annotations: { [InlineTokenAnnotation]: TOKEN, [InlineCABundleAnnotation]: CA, keep: "me" } },
      spec: { apiEndpoint: "https://10.0.0.9:6443", syncMode: "Push" },
    });
    assert.equal(c.statusCode, 201, c.body);
    const cluster = c.json();
    assert.deepEqual(cluster.metadata.annotations, { keep: "me" });
    assert.deepEqual(cluster.spec.secretRef, { namespace: "karmada-cluster", name: "member9" });
    const secret = (await store.get({ gk: "/Secret", namespace: "karmada-cluster", name: "member9" }))!;
    assert.equal(Buffer.from(dataOf(secret)!.token!, "base64").toString(), TOKEN);
    assert.equal(Buffer.from(dataOf(secret)!.caBundle!, "base64").toString(), CA);
    assert.deepEqual(secret.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.uid]), [["Cluster", "member9", cluster.metadata.uid]]);
    assert.deepEqual((await inject("GET", `${CLUSTERS}/member9`)).json().metadata.annotations, { keep: "me" });
    assert.deepEqual((await inject("GET", `${SECRETS}/member9`)).json().data, { token: "", caBundle: "" });

    // rotating through the Cluster (PUT with the annotation) updates the same Secret
    const cur = (await inject("GET", `${CLUSTERS}/member9`)).json();
    cur.metadata.annotations = { ...cur.metadata.annotations, [InlineTokenAnnotation]: "rotated-token" };
    const u = await inject("PUT", `${CLUSTERS}/member9`, cur);
    assert.equal(u.statusCode, 200, u.body);
    assert.equal(Buffer.from(dataOf(await store.get({ gk: "/Secret", namespace: "karmada-cluster", name: "member9" }))!.token!, "base64").toString(), "rotated-token");
    assert.equal((await store.get({ gk: "cluster.karmada.io/Cluster", name: "member9" }))!.metadata.annotations?.[InlineTokenAnnotation], undefined, "never stored");

    // a second create of the same name is refused without touching the first one's Secret
    const dup = await inject("POST", CLUSTERS, { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "member9", annotations: { [InlineTokenAnnotation]: "other" } }, spec: { apiEndpoint: "https://x" } });
    assert.equal(dup.statusCode, 409);
    assert.equal(Buffer.from(dataOf(await store.get({ gk: "/Secret", namespace: "karmada-cluster", name: "member9" }))!.token!, "base64").toString(), "rotated-token");

    // the finding: a new Cluster whose inline token names another member's Secret must not replace that member's token
    for (const secretRef of [{ namespace: "karmada-cluster", name: "member9" }]) {
      const grab = await inject("POST", CLUSTERS, { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "grabber", annotations: { [InlineTokenAnnotation]: "attacker-token" } }, spec: { apiEndpoint: "https://x", secretRef } });
      assert.equal(grab.statusCode, 422, grab.body);
      assert.equal(grab.json().details.causes[0].field, "spec.secretRef");
      assert.match(grab.json().message, /is the credential of cluster "member9"/);
    }
    // also a Secret no Cluster owns but another Cluster names (as a join writes it)
    await store.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "joined", namespace: "karmada-cluster" }, data: { token: Buffer.from("joined-token").toString("base64") } });
    await store.create({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "joined" }, spec: { apiEndpoint: "https://joined", secretRef: { namespace: "karmada-cluster", name: "joined" } } });
    const grab2 = await inject("POST", CLUSTERS, { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "grabber2", annotations: { [InlineTokenAnnotation]: "attacker-token" } }, spec: { apiEndpoint: "https://x", secretRef: { namespace: "karmada-cluster", name: "joined" } } });
    assert.equal(grab2.statusCode, 422);
    assert.equal(Buffer.from(dataOf(await store.get({ gk: "/Secret", namespace: "karmada-cluster", name: "joined" }))!.token!, "base64").toString(), "joined-token");
    assert.equal(Buffer.from(dataOf(await store.get({ gk: "/Secret", namespace: "karmada-cluster", name: "member9" }))!.token!, "base64").toString(), "rotated-token");
    assert.equal(await store.get({ gk: "cluster.karmada.io/Cluster", name: "grabber" }), undefined);

    // an empty inline token is refused, without echoing anything
    const bad = await inject("POST", CLUSTERS, { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "member10", annotations: { [InlineTokenAnnotation]: "" } }, spec: { apiEndpoint: "https://x" } });
    assert.equal(bad.statusCode, 400);
  });

  test("watch events of Secrets are redacted", async () => {
    const lines: string[] = [];
    const req = http.get(`${url}${SECRETS}?watch=true`, { headers: bearer() });
    const got = new Promise<void>((resolve) => {
      req.on("response", (res) => {
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          lines.push(...chunk.split("\n").filter(Boolean));
          if (lines.some((l) => l.includes('"watched"') && l.includes("MODIFIED"))) resolve();
        });
      });
    });
    await new Promise((r) => setTimeout(r, 300));
    await inject("POST", SECRETS, { apiVersion: "v1", kind: "Secret", metadata: { name: "watched" }, data: { token: TOKEN_B64 } });
    await inject("PATCH", `${SECRETS}/watched`, { stringData: { token: "rotated-token" } }, "application/merge-patch+json");
    await got;
    req.destroy();
    for (const l of lines) assertClean(l, "watch event");
    assert.ok(lines.some((l) => JSON.parse(l).type === "ADDED" && JSON.parse(l).object.data.token === ""));
  });

  test("the gRPC front redacts Secrets too", async () => {
    const Client = grpc.makeGenericClientConstructor(grpcServiceDefinition(ObjectService), "ObjectService");
    const client = new Client(grpcAddress, grpc.credentials.createInsecure()) as grpc.Client & Record<string, (...a: unknown[]) => unknown>;
    await store.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "grpc-m", namespace: "karmada-cluster" }, data: { token: TOKEN_B64 } });
    const call = <T>(method: string, req: unknown) =>
      new Promise<T>((resolve, reject) => (client[method] as (r: unknown, md: grpc.Metadata, cb: (e: Error | null, v: T) => void) => void).call(client, req, grpcAuth(), (e, v) => (e ? reject(e) : resolve(v))));
    const key = { apiVersion: "v1", kind: "Secret", namespace: "karmada-cluster", name: "grpc-m" };
    const got = await call<{ object: { case: string; value: Record<string, unknown> } }>("get", create(GetRequestSchema, { key }));
    const text = JSON.stringify(got.object.value);
    assertClean(text, "gRPC get");
    assert.deepEqual((got.object.value as { data: unknown }).data, { token: "" });
    const list = await call<{ items: { object: { value: unknown } }[] }>("list", create(ListRequestSchema, { key: { ...key, name: "" }, labelSelector: "" }));
    assertClean(JSON.stringify(list.items.map((i) => i.object.value)), "gRPC list");
    client.close();
  });
});
