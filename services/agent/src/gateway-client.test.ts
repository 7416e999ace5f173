import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { FlotillaError, GrpcCode, type StatusReason } from "@flotilla/api";
import { GatewayClient, GatewayError, GatewayUnreachableError, isConflictError, isNotFound } from "./gateway-client.js";

// a Status the gateway answers with, as the agent sees it: the reason it names, else the one of its HTTP status
const answers: Array<[string, number, string, StatusReason, GrpcCode, boolean, { notFound: boolean; conflict: boolean }]> = [
  ["404 NotFound", 404, "NotFound", "NotFound", GrpcCode.NOT_FOUND, true, { notFound: true, conflict: false }],
  ["409 Conflict", 409, "Conflict", "Conflict", GrpcCode.ABORTED, true, { notFound: false, conflict: true }],
  ["409 without a reason is a conflict", 409, "", "Conflict", GrpcCode.ABORTED, true, { notFound: false, conflict: true }],
  ["409 AlreadyExists is no conflict", 409, "AlreadyExists", "AlreadyExists", GrpcCode.ALREADY_EXISTS, true, { notFound: false, conflict: false }],
  ["403 Forbidden", 403, "Forbidden", "Forbidden", GrpcCode.PERMISSION_DENIED, false, { notFound: false, conflict: false }],
  ["422 Invalid", 422, "Invalid", "Invalid", GrpcCode.INVALID_ARGUMENT, false, { notFound: false, conflict: false }],
  ["429 TooManyRequests", 429, "TooManyRequests", "TooManyRequests", GrpcCode.RESOURCE_EXHAUSTED, true, { notFound: false, conflict: false }],
  ["503 ServiceUnavailable", 503, "ServiceUnavailable", "ServiceUnavailable", GrpcCode.UNAVAILABLE, true, { notFound: false, conflict: false }],
  ["an unknown reason takes the HTTP status's", 410, "SomethingNew", "Expired", GrpcCode.OUT_OF_RANGE, true, { notFound: false, conflict: false }],
  ["a 5xx without a reason is internal", 502, "", "InternalError", GrpcCode.INTERNAL, true, { notFound: false, conflict: false }],
];
for (const [name, status, reason, want, grpc, retryable, is] of answers) {
  test(`gateway answer: ${name}`, () => {
    const e = new GatewayError(status, reason, "m");
    assert.ok(e instanceof FlotillaError);
    assert.equal(e.name, "GatewayError");
    assert.equal(e.status, status);
    assert.deepEqual([e.reason, e.code, e.retryable], [want, grpc, retryable]);
    assert.deepEqual({ notFound: isNotFound(e), conflict: isConflictError(e) }, is);
  });
}

test("an unreachable gateway is ServiceUnavailable", () => {
  const e = new GatewayUnreachableError("GET /x: connect ECONNREFUSED", { cause: new Error("x") });
  assert.ok(e instanceof FlotillaError);
  assert.deepEqual([e.name, e.reason, e.httpStatus, e.code, e.retryable], ["GatewayUnreachableError", "ServiceUnavailable", 503, GrpcCode.UNAVAILABLE, true]);
});

async function serve(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

test("the client: a Status answer is a GatewayError, a 404 GET is nothing, no answer in time is unreachable", async () => {
  const s = await serve((req, res) => {
    if (req.url === "/slow") return; // never answers
    const [code, reason] = req.url === "/missing" ? [404, "NotFound"] : [409, "Conflict"];
    res.writeHead(code, { "content-type": "application/json" }).end(JSON.stringify({ kind: "Status", status: "Failure", reason, message: `the ${reason}`, code }));
  });
  const c = new GatewayClient({ url: s.url, token: () => "t", timeoutMs: 200 });
  try {
    assert.equal(await c.get("/missing"), undefined);
    await assert.rejects(c.request("PUT", "/x", {}), (e: unknown) => e instanceof GatewayError && e.reason === "Conflict" && e.status === 409 && e.message === "the Conflict" && isConflictError(e));
    await assert.rejects(
      c.request("GET", "/slow"),
      (e: unknown) => e instanceof GatewayUnreachableError && /GET \/slow: GET \/slow timed out/.test(e.message) && e.cause instanceof FlotillaError && e.cause.reason === "Timeout",
    );
  } finally {
    c.close();
    await s.close();
  }
});

test("the client: a gateway that refuses the connection is unreachable", async () => {
  const s = await serve(() => {});
  await s.close();
  const c = new GatewayClient({ url: s.url, token: () => "t", timeoutMs: 1000 });
  try {
    await assert.rejects(c.request("GET", "/x"), (e: unknown) => e instanceof GatewayUnreachableError && e.reason === "ServiceUnavailable");
  } finally {
    c.close();
  }
});
