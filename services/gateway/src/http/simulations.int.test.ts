import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { create, type JsonObject } from "@bufbuild/protobuf";
import {
  SchedulerService,
  SimulateFailureResponseSchema,
  SimulateResponseSchema,
  type SimulateFailureRequest,
  type SimulateRequest,
} from "@flotilla/proto";
import { grpcServiceDefinition } from "@flotilla/proto/grpc";
import { ObjectStore } from "@flotilla/store";
import { freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { TOKENS, bearer, injectAsAdmin, testGatewayDeps } from "../access.test-support.js";
import { buildGateway, type Gateway } from "../app.js";
import { FAILURE_SIMULATIONS_PATH, SIMULATIONS_PATH } from "./simulations.js";

const SIM = {
  apiVersion: "scheduling.flotilla.io/v1alpha1",
  kind: "Simulation",
  spec: { binding: { metadata: { name: "nginx-deployment", namespace: "default" }, spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }, replicas: 3, placement: {} } } },
};

/** A stand-in scheduler: echoes with a status, or rejects like the real one does for a bad field. */
async function fakeScheduler() {
  const seen: JsonObject[] = [];
  const server = new grpc.Server();
  server.addService(grpcServiceDefinition(SchedulerService), {
    simulate(call: grpc.ServerUnaryCall<SimulateRequest, unknown>, cb: grpc.sendUnaryData<unknown>) {
      const sim = call.request.simulation ?? {};
      seen.push(sim);
      if (!(sim.spec as JsonObject | undefined)?.binding) {
        const md = new grpc.Metadata();
        const status = { apiVersion: "v1", kind: "Status", metadata: {}, status: "Failure", reason: "Invalid", code: 422, message: "Simulation.scheduling.flotilla.io \"\" is invalid: spec.binding: Required value", details: { causes: [{ field: "spec.binding", reason: "FieldValueRequired", message: "Required value" }] } };
        md.set("k8s-status", JSON.stringify(status));
        return cb(Object.assign(new Error(status.message), { code: grpc.status.INVALID_ARGUMENT, details: status.message, metadata: md }));
      }
      cb(null, create(SimulateResponseSchema, { simulation: { ...sim, status: { clusters: [{ name: "member2", replicas: 3 }] } } }));
    },
    simulateFailure(call: grpc.ServerUnaryCall<SimulateFailureRequest, unknown>, cb: grpc.sendUnaryData<unknown>) {
      const sim = call.request.simulation ?? {};
      seen.push(sim);
      const names = (sim.spec as JsonObject | undefined)?.clusters;
      if (!Array.isArray(names) || names.includes("member9")) {
        const md = new grpc.Metadata();
        const status = { apiVersion: "v1", kind: "Status", metadata: {}, status: "Failure", reason: "Invalid", code: 422, message: 'FailureSimulation.scheduling.flotilla.io "" is invalid: spec.clusters[0]: Not found: "member9": no such cluster', details: { kind: "failuresimulations", causes: [{ field: "spec.clusters[0]", reason: "FieldValueNotFound", message: 'Not found: "member9": no such cluster' }] } };
        md.set("k8s-status", JSON.stringify(status));
        return cb(Object.assign(new Error(status.message), { code: grpc.status.INVALID_ARGUMENT, details: status.message, metadata: md }));
      }
      cb(null, create(SimulateFailureResponseSchema, { simulation: { ...sim, status: { failedClusters: names, bindings: [], capacity: [] } } }));
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { address: `127.0.0.1:${port}`, seen, close: () => server.forceShutdown() };
}

describe("POST /apis/scheduling.flotilla.io/v1alpha1/simulations", () => {
  let db: TestDatabase;
  let gw: Gateway;
  let down: Gateway;
  let scheduler: Awaited<ReturnType<typeof fakeScheduler>>;
  before(async () => {
    db = await freshDatabase();
    scheduler = await fakeScheduler();
    const store = new ObjectStore(db.sql);
    const deps = testGatewayDeps(store);
    gw = buildGateway({ ...deps, scheduler: { address: scheduler.address, credentials: grpc.credentials.createInsecure() } });
    // nothing listens on port 1
    down = buildGateway({ ...deps, scheduler: { address: "127.0.0.1:1", credentials: grpc.credentials.createInsecure() } });
    injectAsAdmin(gw.http);
    injectAsAdmin(down.http);
    await Promise.all([gw.http.ready(), down.http.ready()]);
  });
  after(async () => {
    await Promise.all([gw.stop(), down.stop()]);
    scheduler.close();
    await db.drop();
  });
  const post = (g: Gateway, body: string, contentType = "application/json") => g.http.inject({ method: "POST", url: SIMULATIONS_PATH, payload: body, headers: { "content-type": contentType } });

  test("forwards the Simulation to the scheduler and answers 200 with its status", async () => {
    const res = await post(gw, JSON.stringify(SIM));
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { ...SIM, status: { clusters: [{ name: "member2", replicas: 3 }] } });
    assert.deepEqual(scheduler.seen.at(-1), SIM);
  });

  test("accepts YAML", async () => {
    const yaml = "apiVersion: scheduling.flotilla.io/v1alpha1\nkind: Simulation\nspec:\n  binding:\n    spec:\n      replicas: 3\n";
    const res = await post(gw, yaml, "application/yaml");
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().status.clusters, [{ name: "member2", replicas: 3 }]);
  });

  test("a body that is not JSON, or not an object, is a 400 Status", async () => {
    for (const body of ["{not json", "[1,2]"]) {
      const res = await post(gw, body);
      assert.equal(res.statusCode, 400, body);
      assert.equal(res.json().kind, "Status");
      assert.equal(res.json().reason, "BadRequest");
    }
  });

  test("the scheduler's 422 naming the field is passed on", async () => {
    const res = await post(gw, JSON.stringify({ apiVersion: "scheduling.flotilla.io/v1alpha1", kind: "Simulation", spec: {} }));
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().reason, "Invalid");
    assert.deepEqual(res.json().details.causes.map((c: { field: string }) => c.field), ["spec.binding"]);
  });

  test("an unreachable scheduler is a 503 Status", async () => {
    const res = await post(down, JSON.stringify(SIM));
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.json().reason, "ServiceUnavailable");
  });
});

describe("POST /apis/scheduling.flotilla.io/v1alpha1/failuresimulations", () => {
  const FAIL = { apiVersion: "scheduling.flotilla.io/v1alpha1", kind: "FailureSimulation", spec: { clusters: ["member1"] } };
  let db: TestDatabase;
  let gw: Gateway;
  let down: Gateway;
  let scheduler: Awaited<ReturnType<typeof fakeScheduler>>;
  before(async () => {
    db = await freshDatabase();
    scheduler = await fakeScheduler();
    const deps = testGatewayDeps(new ObjectStore(db.sql));
    gw = buildGateway({ ...deps, scheduler: { address: scheduler.address, credentials: grpc.credentials.createInsecure() } });
    down = buildGateway({ ...deps, scheduler: { address: "127.0.0.1:1", credentials: grpc.credentials.createInsecure() } });
    await Promise.all([gw.http.ready(), down.http.ready()]);
  });
  after(async () => {
    await Promise.all([gw.stop(), down.stop()]);
    scheduler.close();
    await db.drop();
  });
  const post = (g: Gateway, body: string, headers: Record<string, string> = bearer(), contentType = "application/json") =>
    g.http.inject({ method: "POST", url: FAILURE_SIMULATIONS_PATH, payload: body, headers: { "content-type": contentType, ...headers } });

  test("forwards the FailureSimulation to the scheduler's SimulateFailure and answers 200 with its status", async () => {
    const res = await post(gw, JSON.stringify(FAIL));
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { ...FAIL, status: { failedClusters: ["member1"], bindings: [], capacity: [] } });
    assert.deepEqual(scheduler.seen.at(-1), FAIL);
  });

  test("accepts YAML", async () => {
    const res = await post(gw, "apiVersion: scheduling.flotilla.io/v1alpha1\nkind: FailureSimulation\nspec:\n  clusters: [member1, member2]\n", bearer(), "application/yaml");
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().status.failedClusters, ["member1", "member2"]);
  });

  test("a body that is not JSON, or not an object, is a 400 Status naming the kind", async () => {
    for (const body of ["{not json", "[1,2]", "7"]) {
      const res = await post(gw, body);
      assert.equal(res.statusCode, 400, body);
      assert.equal(res.json().kind, "Status");
      assert.equal(res.json().reason, "BadRequest");
    }
    assert.match((await post(gw, "[1]")).json().message, /FailureSimulation/);
  });

  test("the scheduler's 422 naming spec.clusters[i] is passed on", async () => {
    const res = await post(gw, JSON.stringify({ ...FAIL, spec: { clusters: ["member9"] } }));
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().reason, "Invalid");
    assert.deepEqual(res.json().details.causes.map((c: { field: string }) => c.field), ["spec.clusters[0]"]);
  });

  test("without a token it is 401, and a user without the permission is 403, both as a Status and without asking the scheduler", async () => {
    const before = scheduler.seen.length;
    const anon = await post(gw, JSON.stringify(FAIL), {});
    assert.equal(anon.statusCode, 401, anon.body);
    assert.equal(anon.json().kind, "Status");
    const nobody = await post(gw, JSON.stringify(FAIL), bearer(TOKENS.nobody));
    assert.equal(nobody.statusCode, 403, nobody.body);
    assert.equal(nobody.json().reason, "Forbidden");
    assert.match(nobody.json().message, /cannot create resource "failuresimulations" in API group "scheduling.flotilla.io"/);
    assert.equal(scheduler.seen.length, before);
  });

  test("an unreachable scheduler is a 503 Status", async () => {
    const res = await post(down, JSON.stringify(FAIL));
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.json().reason, "ServiceUnavailable");
  });
});
