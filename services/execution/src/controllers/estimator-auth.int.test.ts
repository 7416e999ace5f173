// The replica estimator takes calls over TLS from service accounts RBAC lets ask for available
// replicas (the scheduler's own): a plaintext call, a call without a token, and one whose account
// has no such role are refused with the gRPC code the gateway would answer.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { GATEWAY_IDENTITY, SCHEDULER_IDENTITY } from "@flotilla/auth";
import { EstimatorClient } from "@flotilla/proto/grpc";
import { harness } from "../int.test-support.js";

test("the estimator refuses plaintext, anonymous and unauthorized calls, and answers the scheduler's service account", async (t) => {
  const h = await harness(t, { clusters: [{ name: "member1" }] });
  const ask = async (credentials: grpc.ChannelCredentials, authorization?: string): Promise<grpc.status | number> => {
    const client = new EstimatorClient(h.estimatorAddress, { deadlineMs: 5000, credentials });
    try {
      if (authorization === undefined) return (await client.maxAvailableReplicas(["member1"])).length;
      // a token of the caller's choosing: the metadata the client would send
      const withToken = grpc.credentials.combineChannelCredentials(
        grpc.credentials.createSsl(h.grpc.ca),
        grpc.credentials.createFromMetadataGenerator((_p, cb) => {
          const md = new grpc.Metadata();
          md.set("authorization", authorization);
          cb(null, md);
        }),
      );
      const other = new EstimatorClient(h.estimatorAddress, { deadlineMs: 5000, credentials: withToken });
      try {
        return (await other.maxAvailableReplicas(["member1"])).length;
      } finally {
        other.close();
      }
    } catch (e) {
      return (e as grpc.ServiceError).code;
    } finally {
      client.close();
    }
  };
  const OK = 1; // one cluster's answer

  assert.equal(await ask(grpc.credentials.createInsecure()), grpc.status.UNAVAILABLE, "plaintext: the server speaks TLS only");
  assert.equal(await ask(grpc.credentials.createSsl(h.grpc.ca)), grpc.status.UNAUTHENTICATED, "TLS without a token");
  assert.equal(await ask(grpc.credentials.createSsl(h.grpc.ca), "Bearer made-up"), grpc.status.UNAUTHENTICATED, "a token nobody issued");
  // the gateway's account may simulate, not ask the estimator
  assert.equal(await ask(h.grpc.caller(h.store, GATEWAY_IDENTITY)), grpc.status.PERMISSION_DENIED, "a service account without the role");
  assert.equal(await ask(h.grpc.caller(h.store, SCHEDULER_IDENTITY)), OK, "the scheduler's service account");
});
