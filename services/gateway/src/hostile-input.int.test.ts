import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import {
  CreateRequestSchema,
  GetRequestSchema,
  ListRequestSchema,
  ObjectService,
  UpdateRequestSchema,
} from "@flotilla/proto";
import { grpcServiceDefinition } from "@flotilla/proto/grpc";
import { MAX_DOCUMENT_DEPTH } from "@flotilla/api";
import { ObjectStore } from "@flotilla/store";
import { freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { grpcAuth, injectAsAdmin, testGatewayDeps } from "./access.test-support.js";
import { buildGateway, type Gateway } from "./app.js";

const DEPLOY = "/apis/apps/v1/namespaces/default/deployments";
const SECRETS = "/api/v1/namespaces/default/secrets";
const TOKEN = "hunter2-member-token";
const TOKEN_B64 = Buffer.from(TOKEN).toString("base64");

const deployment = (name: string, podSpec: Record<string, unknown> = { containers: [{ name: "c", image: "nginx" }] }, spec: Record<string, unknown> = {}) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: podSpec }, ...spec },
});

type Status = { kind: string; reason: string; code: number; message: string; details?: { causes?: Array<{ field: string; reason: string; message: string }> } };

describe("hostile input", () => {
  let db: TestDatabase;
  let gw: Gateway;
  let grpcAddress: string;
  let client: grpc.Client & Record<string, unknown>;
  let rawClient: grpc.Client & Record<string, unknown>;

  before(async () => {
    db = await freshDatabase();
    const store = new ObjectStore(db.sql);
    gw = buildGateway(testGatewayDeps(store));
    injectAsAdmin(gw.http);
    grpcAddress = (await gw.start({ host: "127.0.0.1", port: 0, grpcPort: 0 })).grpcAddress!;
    const def = grpcServiceDefinition(ObjectService);
    client = new (grpc.makeGenericClientConstructor(def, "ObjectService"))(grpcAddress, grpc.credentials.createInsecure()) as never;
    const rawDef = Object.fromEntries(Object.entries(def).map(([n, m]) => [n, { ...m, requestSerialize: (b: Buffer) => b }]));
    rawClient = new (grpc.makeGenericClientConstructor(rawDef, "ObjectService"))(grpcAddress, grpc.credentials.createInsecure()) as never;
    const d = await inject("POST", DEPLOY, deployment("web"));
    assert.equal(d.statusCode, 201, d.body);
    const s = await inject("POST", SECRETS, { apiVersion: "v1", kind: "Secret", metadata: { name: "member" }, data: { token: TOKEN_B64 } });
    assert.equal(s.statusCode, 201, s.body);
  });
  after(async () => {
    client.close();
    rawClient.close();
    await gw.stop();
    await db.drop();
  });

  const inject = (method: string, url: string, body?: unknown, contentType = "application/json") =>
    gw.http.inject({ method: method as "GET", url, payload: body === undefined ? undefined : typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body), headers: body === undefined ? {} : { "content-type": contentType } });
  const status = (r: { body: string }) => JSON.parse(r.body) as Status;
  const fields = (r: { body: string }) => (status(r).details?.causes ?? []).map((c) => c.field);
  const writes = async () => (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM outbox`)[0]!.n;
  const storedWeb = async () => (await db.sql<{ body: unknown }[]>`SELECT body FROM objects WHERE gk = 'apps/Deployment' AND name = 'web'`)[0]!.body;
  const grpcCall = (c: grpc.Client & Record<string, unknown>, method: string, req: unknown) =>
    new Promise<{ code: grpc.status; details: string; value?: unknown }>((resolve) =>
      (c[method] as (r: unknown, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, v: unknown) => void) => void).call(c, req, grpcAuth(), { deadline: new Date(Date.now() + 5000) }, (e, v) =>
        resolve(e ? { code: e.code, details: e.details } : { code: grpc.status.OK, details: "", value: v }),
      ),
    );

  /** Asserts a 4xx Status, with `field` among the causes when given; returns the Status. */
  function rejected(r: { statusCode: number; body: string }, code: number, field?: string): Status {
    assert.equal(r.statusCode, code, r.body);
    const s = status(r);
    assert.equal(s.kind, "Status", r.body);
    assert.equal(s.code, code);
    if (field !== undefined) assert.ok(fields(r).includes(field), `${field} not in ${JSON.stringify(fields(r))}`);
    return s;
  }

  test("a JSON patch through __proto__ is a 422 naming the path, and no prototype changes", async () => {
    const before = await storedWeb();
    for (const path of ["/__proto__/polluted", "/constructor/prototype/polluted", "/metadata/__proto__/polluted"]) {
      const r = await inject("PATCH", `${DEPLOY}/web`, [{ op: "add", path, value: 1 }], "application/json-patch+json");
      const s = rejected(r, 422, "[0].path");
      assert.match(s.message, new RegExp(path.replace(/\//g, "\\/")));
    }
    const move = await inject("PATCH", `${DEPLOY}/web`, [{ op: "copy", from: "/__proto__", path: "/metadata/labels/x" }], "application/json-patch+json");
    rejected(move, 422, "[0].from");
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getOwnPropertyNames(Object.prototype).includes("polluted"), false);
    assert.deepEqual(await storedWeb(), before);
    assert.equal((await inject("GET", "/healthz")).statusCode, 200);
  });

  test("merge, strategic merge and apply patches and plain bodies with a __proto__ key are 422 naming the field", async () => {
    const before = await storedWeb();
    const n = await writes();
    const patches: Array<[string, string, string]> = [
      ["application/merge-patch+json", '{"__proto__": {"polluted": 1}}', "__proto__"],
      ["application/strategic-merge-patch+json", '{"spec": {"__proto__": {"polluted": 1}}}', "spec.__proto__"],
      ["application/apply-patch+yaml", "metadata:\n  labels:\n    __proto__: {polluted: 1}\n", "metadata.labels.__proto__"],
    ];
    for (const [type, body, field] of patches) rejected(await inject("PATCH", `${DEPLOY}/web`, body, type), 422, field);
    rejected(await inject("POST", DEPLOY, '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"p"},"__proto__":{"polluted":1}}'), 422, "__proto__");
    rejected(await inject("POST", DEPLOY, "__proto__: {polluted: 1}\nmetadata: {name: p}\n", "application/yaml"), 422, "__proto__");
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.deepEqual(await storedWeb(), before);
    assert.equal(await writes(), n, "rejected requests write nothing");
  });

  test("constructor and prototype are ordinary keys: a ConfigMap holds them, merge-patched, and no prototype changes", async () => {
    const CM = "/api/v1/namespaces/default/configmaps";
    const c = await inject("POST", CM, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "keys" }, data: { constructor: "a", prototype: "b" } });
    assert.equal(c.statusCode, 201, c.body);
    const p = await inject("PATCH", `${CM}/keys`, '{"data": {"constructor": "c", "toString": "d"}}', "application/merge-patch+json");
    assert.equal(p.statusCode, 200, p.body);
    assert.deepEqual(JSON.parse(p.body).data, { constructor: "c", prototype: "b", toString: "d" });
    assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
    assert.equal(typeof ({} as { constructor: unknown }).constructor, "function");
  });

  test("a NUL or a lone surrogate in any string of a body is a 422 naming the field", async () => {
    const n = await writes();
    rejected(await inject("POST", DEPLOY, { ...deployment("nul"), metadata: { name: "nul", annotations: { a: "x\u0000y" } } }), 422, "metadata.annotations.a");
    rejected(await inject("POST", DEPLOY, '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"s"},"spec":{"x":"\\ud800"}}'), 422, "spec.x");
    rejected(await inject("POST", DEPLOY, '{"metadata":{"name":"k","labels":{"a\\u0000":"b"}}}'), 422, "metadata.labels.a\u0000");
    rejected(await inject("PATCH", `${DEPLOY}/web`, { metadata: { labels: { a: "\u0000" } } }, "application/merge-patch+json"), 422, "metadata.labels.a");
    rejected(await inject("POST", DEPLOY, 'metadata: {name: y}\nspec: {x: "a\\0b"}\n', "application/yaml"), 422, "spec.x");
    assert.equal(await writes(), n);
  });

  test("a NUL in a URL's name or namespace is a 404, and a malformed percent-escape a 400 Status", async () => {
    for (const m of ["GET", "DELETE"]) rejected(await inject(m, `${DEPLOY}/we%00b`), 404);
    rejected(await inject("PUT", `${DEPLOY}/we%00b`, deployment("web")), 404);
    rejected(await inject("GET", "/api/v1/namespaces/a%00/configmaps"), 404);
    rejected(await inject("GET", `${DEPLOY}?labelSelector=a%00`), 400, "labelSelector");
    for (const bad of ["%", "%zz", "%ED%A0%80"]) {
      const r = rejected(await inject("GET", `${DEPLOY}/${bad}`), 400);
      assert.equal(r.reason, "BadRequest");
    }
  });

  test("wrong JSON types in metadata are a 422 naming the field", async () => {
    const n = await writes();
    rejected(await inject("POST", DEPLOY, { ...deployment("x"), metadata: { name: true } }), 422, "metadata.name");
    rejected(await inject("POST", DEPLOY, { ...deployment("x"), metadata: { name: "x", labels: [] } }), 422, "metadata.labels");
    rejected(await inject("POST", DEPLOY, { ...deployment("x"), metadata: { name: "x", generateName: 5 } }), 422, "metadata.generateName");
    rejected(await inject("POST", DEPLOY, { ...deployment("x"), metadata: "x" }), 422, "metadata");
    rejected(await inject("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "c", annotations: { a: 1 } } }), 422, "metadata.annotations[a]");
    assert.equal(await writes(), n);
  });

  test("a body nested deeper than the limit is a 422, and one over 3 MiB a 413 RequestEntityTooLarge Status", async () => {
    const deep = '{"a":'.repeat(3000) + "1" + "}".repeat(3000);
    rejected(await inject("POST", DEPLOY, `{"metadata":{"name":"deep"},"spec":${deep}}`), 422);
    rejected(await inject("PATCH", `${DEPLOY}/web`, `{"spec":${deep}}`, "application/merge-patch+json"), 422);
    rejected(await inject("POST", DEPLOY, "a: " + "[".repeat(3000), "application/yaml"), 400);
    // patching can nest deeper than either document: the result is checked too
    const forty = JSON.parse('{"a":'.repeat(40) + "1" + "}".repeat(40));
    rejected(await inject("PATCH", `${DEPLOY}/web`, [{ op: "add", path: "/spec/x", value: forty }, { op: "add", path: "/spec/x" + "/a".repeat(39), value: forty }], "application/json-patch+json"), 422);
    const big = rejected(await inject("POST", DEPLOY, { ...deployment("big"), data: "x".repeat(3 * 1024 * 1024) }), 413);
    assert.equal(big.reason, "RequestEntityTooLarge");
  });

  test("a body of a media type the verb does not take is a 415 UnsupportedMediaType Status", async () => {
    const n = await writes();
    for (const type of ["text/plain", "image/png", "multipart/form-data; boundary=x", "application/vnd.kubernetes.protobuf", "application/merge-patch+json"]) {
      const r = rejected(await inject("POST", DEPLOY, deployment("ct"), type), 415);
      assert.equal(r.reason, "UnsupportedMediaType");
    }
    for (const type of ["application/json", "application/yaml", "text/plain"]) rejected(await inject("PATCH", `${DEPLOY}/web`, { metadata: {} }, type), 415);
    assert.equal(await writes(), n);
    assert.equal((await inject("POST", DEPLOY, deployment("ct"), "application/json; charset=utf-8")).statusCode, 201);
  });

  test("a Deployment whose cpu request is not a quantity is a 422 naming the field, and nothing is stored", async () => {
    const n = await writes();
    for (const cpu of [true, [], {}, "lots", -1]) {
      const r = await inject("POST", DEPLOY, deployment("bad-cpu", { containers: [{ name: "c", image: "nginx", resources: { requests: { cpu } } }] }));
      rejected(r, 422, "spec.template.spec.containers[0].resources.requests[cpu]");
    }
    rejected(await inject("POST", DEPLOY, deployment("bad-replicas", undefined, { replicas: -1 })), 422, "spec.replicas");
    rejected(await inject("POST", DEPLOY, deployment("bad-replicas", undefined, { replicas: "3" })), 422, "spec.replicas");
    rejected(await inject("POST", DEPLOY, deployment("bad-selector", undefined, { selector: { matchLabels: { app: 1 } } })), 422, "spec.selector.matchLabels[app]");
    rejected(await inject("POST", "/apis/batch/v1/namespaces/default/jobs", { apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" }, spec: { parallelism: 1.5, template: { spec: { containers: [] } } } }), 422, "spec.parallelism");
    rejected(await inject("PATCH", `${DEPLOY}/web`, [{ op: "add", path: "/spec/template/spec/containers/0/resources", value: { limits: { memory: {} } } }], "application/json-patch+json"), 422, "spec.template.spec.containers[0].resources.limits[memory]");
    assert.equal(await writes(), n);
    const ok = await inject("POST", DEPLOY, deployment("good-cpu", { containers: [{ name: "c", image: "nginx", resources: { requests: { cpu: "100m", memory: 67108864 }, limits: { cpu: 1 } } }] }));
    assert.equal(ok.statusCode, 201, ok.body);
  });

  test("a quantity with whitespace around or inside it is a 422 naming the field, in a template, a patch and a Work, and nothing is stored", async () => {
    const n = await writes();
    const withResources = (name: string, resources: Record<string, unknown>) => deployment(name, { containers: [{ name: "c", image: "nginx", resources }] });
    for (const cpu of ["1Gi ", " 100m", "1 Gi", "2\n", "500m\t"]) {
      const r = rejected(await inject("POST", DEPLOY, withResources("spaced", { requests: { cpu } })), 422, "spec.template.spec.containers[0].resources.requests[cpu]");
      assert.equal(r.reason, "Invalid");
      assert.match(r.message, /quantities must match the regular expression/);
    }
    rejected(await inject("POST", DEPLOY, withResources("spaced", { limits: { memory: "64Mi " } })), 422, "spec.template.spec.containers[0].resources.limits[memory]");
    rejected(await inject("PATCH", `${DEPLOY}/web`, [{ op: "add", path: "/spec/template/spec/containers/0/resources", value: { requests: { cpu: "1Gi " } } }], "application/json-patch+json"), 422, "spec.template.spec.containers[0].resources.requests[cpu]");
    rejected(await inject("PATCH", `${DEPLOY}/web`, { spec: { template: { spec: { containers: [{ name: "c", resources: { limits: { cpu: " 1" } } }] } } } }, "application/strategic-merge-patch+json"), 422, "spec.template.spec.containers[0].resources.limits[cpu]");
    const work = { apiVersion: "work.karmada.io/v1alpha1", kind: "Work", metadata: { name: "spaced" }, spec: { workload: { manifests: [{ ...withResources("spaced", { requests: { cpu: "1Gi " } }), metadata: { name: "spaced", namespace: "default" } }] } } };
    rejected(await inject("POST", "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works", work), 422, "spec.workload.manifests[0].spec.template.spec.containers[0].resources.requests[cpu]");
    const overGrpc = await grpcCall(client, "create", create(CreateRequestSchema, { object: { object: { case: "template", value: { ...withResources("spaced", { requests: { cpu: "1Gi " } }), metadata: { name: "spaced", namespace: "default" } } } } } as never));
    assert.equal(grpc.status[overGrpc.code], "INVALID_ARGUMENT", overGrpc.details);
    assert.equal(await writes(), n, "rejected requests write nothing");
    assert.equal((await inject("POST", DEPLOY, withResources("unspaced", { requests: { cpu: "1", memory: "1Gi" } }))).statusCode, 201);
  });

  test("a body in a charset other than UTF-8 is a 415 UnsupportedMediaType Status; UTF-8 named in any case, or no charset, is read", async () => {
    const n = await writes();
    const utf16 = Buffer.from(JSON.stringify(deployment("utf16")), "utf16le");
    for (const [body, type] of [
      [utf16, "application/json; charset=utf-16"],
      [deployment("latin"), "application/json; charset=ISO-8859-1"],
      [deployment("quoted"), 'application/json; charset="UTF-16"'],
      ["metadata: {name: y}\n", "application/yaml; charset=utf-16le"],
    ] as Array<[unknown, string]>) {
      const r = rejected(await inject("POST", DEPLOY, body, type), 415);
      assert.equal(r.reason, "UnsupportedMediaType");
      assert.match(r.message, /charset/);
    }
    rejected(await inject("PATCH", `${DEPLOY}/web`, { metadata: { labels: { a: "b" } } }, "application/merge-patch+json; charset=utf-16"), 415);
    assert.equal(await writes(), n, "rejected requests write nothing");
    for (const [name, type] of [["upper", "application/json; charset=UTF-8"], ["quoted", 'application/json;charset="utf-8"'], ["plain", "application/json"]]) {
      const r = await inject("POST", DEPLOY, deployment(`charset-${name}`), type);
      assert.equal(r.statusCode, 201, `${type}: ${r.body}`);
    }
  });

  test("a status write without a status clears it, for typed kinds too, instead of failing to decode", async () => {
    const CLUSTERS = "/apis/cluster.karmada.io/v1alpha1/clusters";
    assert.equal((await inject("POST", CLUSTERS, { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "st" }, spec: { syncMode: "Push" } })).statusCode, 201);
    const set = await inject("PUT", `${CLUSTERS}/st/status`, { metadata: { name: "st" }, status: { kubernetesVersion: "v1.29.0" } });
    assert.equal(set.statusCode, 200, set.body);
    const patch = await inject("PATCH", `${CLUSTERS}/st/status`, '{"a":"b"}', "application/apply-patch+yaml");
    assert.equal(patch.statusCode, 200, patch.body);
    const put = await inject("PUT", `${CLUSTERS}/st/status`, { metadata: { name: "st" } });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.json().status, undefined);
  });

  test("every object the REST API accepts can be listed over gRPC, however deep it is nested", async () => {
    const cm = (name: string, levels: number) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: JSON.parse('{"a":'.repeat(levels - 1) + "1" + "}".repeat(levels - 1)) });
    assert.equal((await inject("POST", "/api/v1/namespaces/deep/configmaps", cm("at-limit", MAX_DOCUMENT_DEPTH))).statusCode, 201);
    rejected(await inject("POST", "/api/v1/namespaces/deep/configmaps", cm("over-limit", MAX_DOCUMENT_DEPTH + 1)), 422);
    const list = await grpcCall(client, "list", create(ListRequestSchema, { key: { apiVersion: "v1", kind: "ConfigMap", namespace: "deep" } }));
    assert.equal(grpc.status[list.code], "OK", list.details);
  });

  test("a JSON patch test of a Secret's value answers the same for the right and a wrong guess", async () => {
    const right = await inject("PATCH", `${SECRETS}/member`, [{ op: "test", path: "/data/token", value: TOKEN_B64 }], "application/json-patch+json");
    const wrong = await inject("PATCH", `${SECRETS}/member`, [{ op: "test", path: "/data/token", value: "d3Jvbmc=" }], "application/json-patch+json");
    assert.equal(right.statusCode, wrong.statusCode);
    assert.equal(right.body.replace(TOKEN_B64, "d3Jvbmc="), wrong.body);
    assert.equal((await db.sql<{ t: string }[]>`SELECT body->'data'->>'token' AS t FROM objects WHERE gk = '/Secret' AND name = 'member'`)[0]!.t, TOKEN_B64);
  });

  test("a JSON patch copy or move of a Secret's value never shows it, then or later", async () => {
    const copy = await inject("PATCH", `${SECRETS}/member`, [{ op: "add", path: "/metadata/annotations", value: {} }, { op: "copy", from: "/data/token", path: "/metadata/annotations/leak" }, { op: "copy", from: "/data/token", path: "/data/copied" }], "application/json-patch+json");
    assert.equal(copy.statusCode, 200, copy.body);
    const move = await inject("PATCH", `${SECRETS}/member`, [{ op: "move", from: "/data/copied", path: "/metadata/annotations/moved" }], "application/json-patch+json");
    assert.equal(move.statusCode, 200, move.body);
    for (const r of [copy, move, await inject("GET", `${SECRETS}/member`), await inject("GET", SECRETS)]) {
      assert.ok(!r.body.includes(TOKEN_B64) && !r.body.includes(TOKEN), r.body);
    }
    const [row] = await db.sql<{ body: { data: Record<string, string>; metadata: { annotations?: unknown } } }[]>`SELECT body FROM objects WHERE gk = '/Secret' AND name = 'member'`;
    assert.equal(row!.body.data.token, TOKEN_B64, "the value stays stored");
    assert.ok(!JSON.stringify(row!.body.metadata).includes(TOKEN_B64), "and was not copied anywhere readable");
    assert.notEqual(row!.body.data.copied, TOKEN_B64);
  });

  test("gRPC answers INVALID_ARGUMENT or NOT_FOUND to bad input, never INTERNAL", async () => {
    const template = (value: Record<string, unknown>) => create(CreateRequestSchema, { object: { object: { case: "template", value } } } as never);
    const cases: Array<[string, grpc.Client & Record<string, unknown>, string, unknown, grpc.status]> = [
      ["a non-string apiVersion", client, "create", template({ apiVersion: 5, kind: "ConfigMap", metadata: { name: "a", namespace: "default" } }), grpc.status.INVALID_ARGUMENT],
      ["a non-string namespace", client, "create", template({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: ["x"] } }), grpc.status.INVALID_ARGUMENT],
      ["a NUL in a template", client, "create", template({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" }, data: { a: "\u0000" } }), grpc.status.INVALID_ARGUMENT],
      ["a NUL in a key's name", client, "get", create(GetRequestSchema, { key: { apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "a\u0000" } }), grpc.status.NOT_FOUND],
      ["a lone surrogate in a key's kind", client, "get", create(GetRequestSchema, { key: { apiVersion: "v1", kind: "\ud800", namespace: "default", name: "a" } }), grpc.status.INVALID_ARGUMENT],
      ["a typed object without apiVersion", client, "update", create(UpdateRequestSchema, { object: { object: { case: "propagationPolicy", value: { metadata: { name: "nope", namespace: "default" } } } } } as never), grpc.status.NOT_FOUND],
      ["bytes that are no message", rawClient, "get", Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), grpc.status.INVALID_ARGUMENT],
    ];
    for (const [what, c, method, req, want] of cases) {
      const r = await grpcCall(c, method, req);
      assert.equal(grpc.status[r.code], grpc.status[want], `${what}: ${r.details}`);
    }
    const ok = await grpcCall(client, "get", create(GetRequestSchema, { key: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "web" } }));
    assert.equal(ok.code, grpc.status.OK, "the server still answers");
  });

  test("a delete or update with a resourceVersion that is not a number is a 409 Conflict, not a 500", async () => {
    const d = await inject("DELETE", `${DEPLOY}/web`, { preconditions: { resourceVersion: "abc" } });
    rejected(d, 409);
    const u = await inject("PUT", `${DEPLOY}/web`, { ...deployment("web"), metadata: { name: "web", resourceVersion: "99999999999999999999999" } });
    rejected(u, 409);
    rejected(await inject("DELETE", `${DEPLOY}/web`, { preconditions: { uid: 5 } }), 400, "preconditions.uid");
    assert.equal((await inject("GET", `${DEPLOY}/web`)).statusCode, 200);
  });
});
