import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { EstimatorService, MaxAvailableReplicasResponseSchema, type MaxAvailableReplicasRequest } from "@flotilla/proto";
import { EstimatorClient, grpcServiceDefinition } from "@flotilla/proto/grpc";
import type { AnyResourceBinding } from "@flotilla/api";
import { binding, cluster, placements } from "./fixtures.test-support.js";
import { scheduledCondition, startHarness, targets, type Harness } from "./harness.test-support.js";

const scheduled = (b: AnyResourceBinding) => scheduledCondition(b)?.status === "True" && b.status?.schedulerObservedGeneration === b.metadata.generation;

/** An EstimatorService that answers from a table, or never (to miss the deadline). */
async function estimatorServer(answer: Record<string, number> | "hang") {
  const requests: MaxAvailableReplicasRequest[] = [];
  const server = new grpc.Server();
  server.addService(grpcServiceDefinition(EstimatorService), {
    maxAvailableReplicas(call: grpc.ServerUnaryCall<MaxAvailableReplicasRequest, unknown>, cb: grpc.sendUnaryData<unknown>) {
      requests.push(call.request);
      if (answer === "hang") return;
      cb(null, create(MaxAvailableReplicasResponseSchema, { clusters: Object.entries(answer).map(([name, maxReplicas]) => ({ name, maxReplicas })) }));
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { address: `127.0.0.1:${port}`, requests, close: () => server.forceShutdown() };
}

describe("the replica estimator over gRPC", () => {
  let h: Harness;
  let est: Awaited<ReturnType<typeof estimatorServer>>;
  let client: EstimatorClient;
  before(async () => {
    est = await estimatorServer({ member1: 1, member2: 9 });
    client = new EstimatorClient(est.address);
    h = await startHarness({ estimator: client, settings: { estimatorDeadlineMs: 500 } });
    for (const n of ["member1", "member2"]) await h.createCluster(cluster(n));
  });
  after(async () => {
    await h.close();
    client.close();
    est.close();
  });

  test("its answers bound the available replicas of a dynamic-weight binding, below the resource summary", async () => {
    await h.createBinding(binding("web", { replicas: 10, cpu: "100m", placement: placements.dynamic() }));
    const b = await h.until("default/web-deployment", scheduled);
    assert.deepEqual(targets(b), ["member1:1", "member2:9"]);
    assert.deepEqual(
      b.status?.schedulingDiagnosis?.feasible?.map((f) => [f.name, f.allocatableReplicas]),
      [
        ["member2", 9],
        ["member1", 1],
      ],
    );
    assert.deepEqual(est.requests[0].replicaRequirements?.resourceRequest, { cpu: "100m" });
  });

  test("a binding whose division does not depend on capacity does not ask", async () => {
    const before = est.requests.length;
    await h.createBinding(binding("static", { replicas: 3 }));
    await h.until("default/static-deployment", scheduled);
    assert.equal(est.requests.length, before);
  });
});

describe("an estimator that misses its deadline", () => {
  let h: Harness;
  let est: Awaited<ReturnType<typeof estimatorServer>>;
  let client: EstimatorClient;
  before(async () => {
    est = await estimatorServer("hang");
    client = new EstimatorClient(est.address);
    h = await startHarness({ estimator: client, settings: { estimatorDeadlineMs: 150 } });
    await h.createCluster(cluster("member1", { pods: 4 }));
    await h.createCluster(cluster("member2", { pods: 12 }));
  });
  after(async () => {
    await h.close();
    client.close();
    est.close();
  });

  test("is given up on: the clusters' resource summaries decide", async () => {
    await h.createBinding(binding("web", { replicas: 8, placement: placements.dynamic() }));
    const b = await h.until("default/web-deployment", scheduled);
    assert.deepEqual(targets(b), ["member1:2", "member2:6"]);
    assert.equal(est.requests.length, 1);
    assert.equal(h.app.metrics.estimates.error, 1);
  });
});
