import { test } from "node:test";
import assert from "node:assert/strict";
import { FlotillaError, GrpcCode, type StatusReason } from "@flotilla/api";
import { ProtocolError, TunnelHub, TunnelRequestError, decodeFrame } from "./index.js";

// where the tunnel's errors sit in the taxonomy, should one reach a caller
const taxonomy: Array<[string, () => FlotillaError, string, StatusReason, number, GrpcCode, boolean]> = [
  ["no tunnel for the member: it cannot be reached now", () => new TunnelRequestError("no tunnel", "TunnelClosed"), "TunnelRequestError", "ServiceUnavailable", 503, GrpcCode.UNAVAILABLE, true],
  ["the member refused the agent's connection", () => new TunnelRequestError("the member did not answer the agent", "ECONNREFUSED"), "TunnelRequestError", "ServiceUnavailable", 503, GrpcCode.UNAVAILABLE, true],
  ["no answer in time through the tunnel", () => new TunnelRequestError("no answer within 10 ms", "TimeoutError"), "TunnelRequestError", "ServiceUnavailable", 503, GrpcCode.UNAVAILABLE, true],
  ["a malformed frame is the tunnel's own fault, no caller's", () => new ProtocolError("a text message"), "ProtocolError", "InternalError", 500, GrpcCode.INTERNAL, true],
];
for (const [name, make, errName, reason, http, grpc, retryable] of taxonomy) {
  test(`taxonomy: ${name}`, () => {
    const e = make();
    assert.ok(e instanceof FlotillaError);
    assert.equal(FlotillaError.from(e), e);
    assert.equal(e.name, errName);
    assert.deepEqual([e.reason, e.httpStatus, e.code, e.retryable], [reason, http, grpc, retryable]);
    assert.deepEqual([e.toStatus().reason, e.toStatus().code, e.toStatus().message], [reason, http, e.message]);
  });
}

test("a tunnel failure keeps why it failed in errorCode", () => {
  const e = new TunnelRequestError("the agent reset the stream", "ECONNRESET");
  assert.equal(e.errorCode, "ECONNRESET");
  assert.equal(e.message, "the agent reset the stream");
});

test("a frame that does not parse throws a ProtocolError, a FlotillaError", () => {
  assert.throws(
    () => decodeFrame(new Uint8Array([1, 0, 0])),
    (e: unknown) => e instanceof ProtocolError && e instanceof FlotillaError && e.reason === "InternalError" && /shorter than its header/.test(e.message),
  );
});

test("forwarding to a member without a tunnel fails as unavailable (TunnelClosed)", async () => {
  const hub = new TunnelHub();
  await assert.rejects(
    hub.forward("member1", { method: "GET", path: "/api", headers: {}, timeoutMs: 1000 }),
    (e: unknown) => e instanceof TunnelRequestError && e.errorCode === "TunnelClosed" && e.httpStatus === 503 && e.code === GrpcCode.UNAVAILABLE,
  );
});
