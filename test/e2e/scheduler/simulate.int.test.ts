// The simulation endpoint end to end: the gateway's REST route, gRPC to this scheduler, the same
// schedule() the controller runs, nothing written.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { SchedulerService, SimulateRequestSchema, type SimulateResponse } from "@flotilla/proto";
import { grpcServiceDefinition } from "@flotilla/proto/grpc";
import type { AnyResourceBinding } from "@flotilla/api";
import { GATEWAY_IDENTITY, SCHEDULER_IDENTITY } from "@flotilla/auth";
import { buildGateway, type Gateway } from "../../../services/gateway/src/app.js";
import { bearer, testGatewayDeps } from "../../../services/gateway/src/access.test-support.js";
import { binding, cluster, notReadyNoSchedule } from "../../../services/scheduler/src/fixtures.test-support.js";
import { scheduledCondition, startHarness, targets, type Harness } from "../../../services/scheduler/src/harness.test-support.js";

const NGINX = "default/nginx-deployment";
const PATH = "/apis/scheduling.flotilla.io/v1alpha1/simulations";

describe("simulations through the gateway", () => {
  let h: Harness;
  let gw: Gateway;
  let stored: AnyResourceBinding;
  before(async () => {
    h = await startHarness();
    for (const n of ["member1", "member2", "member3"]) await h.createCluster(cluster(n));
    await h.createBinding(binding("nginx", { replicas: 3 }));
    stored = await h.until(NGINX, (b) => scheduledCondition(b)?.status === "True" && b.status?.schedulerObservedGeneration === b.metadata.generation);
    gw = buildGateway({ ...testGatewayDeps(h.store), scheduler: { address: h.grpcAddress, credentials: h.grpc.caller(h.store, GATEWAY_IDENTITY) } });
    await gw.http.ready();
  });
  after(async () => {
    await gw.stop();
    await h.close();
  });
  // as the administrator (system:masters) of the gateway's test token file
  const post = (body: unknown, auth: Record<string, string> = bearer()) => gw.http.inject({ method: "POST", url: PATH, payload: JSON.stringify(body), headers: { "content-type": "application/json", ...auth } });
  const simulation = (spec: Record<string, unknown>) => ({ apiVersion: "scheduling.flotilla.io/v1alpha1", kind: "Simulation", metadata: { name: "what-if" }, spec });

  test("with member1 tainted not-ready:NoSchedule the seed binding would go to member2:3; the stored binding is untouched", async () => {
    assert.deepEqual(targets(stored), ["member1:1", "member2:2"]);
    const tainted = cluster("member1", { taints: [notReadyNoSchedule] });
    const { clusters: _c, ...spec } = stored.spec!;
    const res = await post(simulation({ clusters: [tainted, cluster("member2"), cluster("member3")], binding: { metadata: { name: stored.metadata.name, namespace: "default" }, spec } }));
    assert.equal(res.statusCode, 200, res.body);
    const out = res.json();
    assert.equal(out.kind, "Simulation");
    assert.equal(out.metadata.name, "what-if");
    assert.deepEqual(out.status.clusters, [{ name: "member2", replicas: 3 }]);
    assert.deepEqual(out.status.diagnosis, {
      member1: [{ plugin: "TaintToleration", reason: "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}" }],
      member3: [{ plugin: "ClusterAffinity", reason: "cluster(s) did not match the placement cluster affinity constraint" }],
    });
    assert.deepEqual(out.status.scores, [{ name: "member2", score: 0 }]);
    assert.deepEqual(
      out.status.conditions.map((c: Record<string, string>) => [c.type, c.status, c.reason, c.message]),
      [["Scheduled", "True", "Success", "Binding has been scheduled successfully."]],
    );
    const after = await h.get(NGINX);
    assert.equal(after?.metadata.resourceVersion, stored.metadata.resourceVersion, "nothing was written");
  });

  test("without inline clusters the current ones are used (member1 now tainted in the store)", async () => {
    await h.mutateCluster("member1", (c) => (c.spec = { ...c.spec, taints: [notReadyNoSchedule] }));
    const { clusters: _c, ...spec } = stored.spec!;
    const res = await post(simulation({ binding: { metadata: { name: stored.metadata.name, namespace: "default" }, spec } }));
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().status.clusters, [{ name: "member2", replicas: 3 }]);
    // with its current placement kept, member1 passes the taint filter: the scheduler would not move it
    const kept = await post(simulation({ binding: { metadata: { name: stored.metadata.name, namespace: "default" }, spec: stored.spec } }));
    assert.deepEqual(kept.json().status.clusters, [
      { name: "member1", replicas: 1 },
      { name: "member2", replicas: 2 },
    ]);
  });

  test("nothing fitting answers an empty list and the FitError condition", async () => {
    const { clusters: _c, ...spec } = stored.spec!;
    const res = await post(simulation({ clusters: [cluster("member1", { taints: [notReadyNoSchedule] }), cluster("member3")], binding: { spec } }));
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().status.clusters, []);
    assert.deepEqual(res.json().status.conditions[0].reason, "NoClusterFit");
    assert.equal(res.json().status.conditions[0].message, "0/2 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint, 1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}.");
  });

  test("a malformed simulation is a 422 Status naming every bad field", async () => {
    const res = await post(simulation({ clusters: [{ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "x" }, spec: { taints: 3 } }], binding: { spec: { replicas: 3 } } }));
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().kind, "Status");
    assert.deepEqual(
      res.json().details.causes.map((c: { field: string }) => c.field),
      ["spec.clusters[0].spec.taints", "spec.binding.spec.resource", "spec.binding.spec.placement"],
    );
  });

  test("without a token the simulation is refused with 401", async () => {
    const { clusters: _c, ...spec } = stored.spec!;
    const res = await post(simulation({ binding: { spec } }), {});
    assert.equal(res.statusCode, 401, res.body);
    assert.equal(res.json().kind, "Status");
  });

  type SimulateClient = grpc.Client & { simulate: (r: unknown, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r: SimulateResponse) => void) => void };
  const Client = grpc.makeGenericClientConstructor(grpcServiceDefinition(SchedulerService), "SchedulerService");
  /** One Simulate call over `credentials` (with `authorization` metadata when given); resolves to the answer or the gRPC error. */
  async function call(credentials: grpc.ChannelCredentials, authorization?: string): Promise<SimulateResponse | grpc.ServiceError> {
    const client = new Client(h.grpcAddress, credentials) as unknown as SimulateClient;
    const md = new grpc.Metadata();
    if (authorization) md.set("authorization", authorization);
    const { clusters: _c, ...spec } = stored.spec!;
    try {
      return await new Promise<SimulateResponse | grpc.ServiceError>((resolve) =>
        client.simulate(create(SimulateRequestSchema, { simulation: simulation({ binding: { spec } }) as never }), md, { deadline: Date.now() + 5000 }, (e, r) => resolve(e ?? r)),
      );
    } finally {
      client.close();
    }
  }
  const codeOf = (r: SimulateResponse | grpc.ServiceError) => ("code" in r ? r.code : grpc.status.OK);

  test("the scheduler's gRPC API answers the same to the gateway's service account", async () => {
    const res = await call(h.grpc.caller(h.store, GATEWAY_IDENTITY));
    assert.equal(codeOf(res), grpc.status.OK, JSON.stringify(res));
    assert.deepEqual(((res as SimulateResponse).simulation?.status as { clusters: unknown }).clusters, [{ name: "member2", replicas: 3 }]);
  });

  test("the scheduler's gRPC API refuses a plaintext call (UNAVAILABLE: it speaks TLS only)", async () => {
    assert.equal(codeOf(await call(grpc.credentials.createInsecure())), grpc.status.UNAVAILABLE);
  });

  test("the scheduler's gRPC API refuses a call over TLS without a token, or with one it does not know (UNAUTHENTICATED, a Kubernetes Status)", async () => {
    const tls = grpc.credentials.createSsl(h.grpc.ca);
    for (const auth of [undefined, "Bearer not-a-token", `Bearer ${(await h.grpc.tokens(h.store).issue({ namespace: "flotilla-system", name: "ghost", uid: "no-such-uid" }, { audiences: ["https://flotilla.local"], expirationSeconds: 600 })).token}`]) {
      const res = await call(tls, auth);
      assert.equal(codeOf(res), grpc.status.UNAUTHENTICATED, `${auth}: ${JSON.stringify(res)}`);
      const status = JSON.parse(String((res as grpc.ServiceError).metadata.get("k8s-status")[0])) as { reason: string; code: number };
      assert.deepEqual([status.reason, status.code], ["Unauthorized", 401]);
    }
  });

  test("the scheduler's gRPC API refuses a service account whose roles do not allow simulations (PERMISSION_DENIED naming the verb and resource)", async () => {
    // the scheduler's own identity may ask the estimator, nothing else
    const res = await call(h.grpc.caller(h.store, SCHEDULER_IDENTITY));
    assert.equal(codeOf(res), grpc.status.PERMISSION_DENIED, JSON.stringify(res));
    assert.match((res as grpc.ServiceError).details, /User "system:serviceaccount:flotilla-system:scheduler" cannot create resource "simulations" in API group "scheduling.flotilla.io"/);
  });
});
