// The simulation endpoint end to end: the gateway's REST route, gRPC to this scheduler, the same
// schedule() the controller runs, nothing written.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { SchedulerService, SimulateRequestSchema, type SimulateResponse } from "@flotilla/proto";
import { grpcServiceDefinition } from "@flotilla/proto/grpc";
import type { AnyResourceBinding } from "@flotilla/api";
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
    gw = buildGateway({ ...testGatewayDeps(h.store), scheduler: h.grpcAddress });
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

  test("the scheduler's gRPC API answers the same", async () => {
    const Client = grpc.makeGenericClientConstructor(grpcServiceDefinition(SchedulerService), "SchedulerService");
    const client = new Client(h.grpcAddress, grpc.credentials.createInsecure()) as unknown as grpc.Client & { simulate: (r: unknown, cb: (e: grpc.ServiceError | null, r: SimulateResponse) => void) => void };
    const { clusters: _c, ...spec } = stored.spec!;
    const res = await new Promise<SimulateResponse>((resolve, reject) =>
      client.simulate(create(SimulateRequestSchema, { simulation: simulation({ binding: { spec } }) as never }), (e, r) => (e ? reject(e) : resolve(r))),
    );
    client.close();
    assert.deepEqual((res.simulation?.status as { clusters: unknown }).clusters, [{ name: "member2", replicas: 3 }]);
  });
});
