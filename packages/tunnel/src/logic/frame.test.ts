import { test } from "node:test";
import assert from "node:assert/strict";
import { FrameType, ProtocolError, chunks, decodeFrame, encodeFrame, encodeJson, identityMayTunnel, parseRequestHead, parseReset, parseResponseHead, tunnelCluster, tunnelPath } from "./frame.js";

const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

test("a frame decodes to the type, stream and payload it was encoded with", () => {
  const f = decodeFrame(encodeFrame(FrameType.Data, 70_000, new Uint8Array([1, 2, 3])));
  assert.equal(f.type, FrameType.Data);
  assert.equal(f.stream, 70_000);
  assert.deepEqual([...f.payload], [1, 2, 3]);
  const j = decodeFrame(encodeJson(FrameType.Response, 1, { status: 200, headers: {} }));
  assert.deepEqual(parseResponseHead(j.payload), { status: 200, headers: {} });
});

const badFrames: Array<[string, Uint8Array, RegExp]> = [
  ["a frame shorter than its header is refused", new Uint8Array([2, 0, 0]), /shorter than its header/],
  ["an unknown frame type is refused", new Uint8Array([9, 0, 0, 0, 1]), /unknown frame type 9/],
  ["stream 0 is refused", new Uint8Array([2, 0, 0, 0, 0]), /stream 0/],
];
for (const [name, data, want] of badFrames) test(name, () => assert.throws(() => decodeFrame(data), (e: Error) => e instanceof ProtocolError && want.test(e.message)));

const requests: Array<[string, unknown, RegExp | { method: string; path: string; body: boolean }]> = [
  ["a GET of a path on the member is taken", { method: "GET", path: "/api/v1/pods?watch=true", headers: { "impersonate-user": "alice" } }, { method: "GET", path: "/api/v1/pods?watch=true", body: false }],
  ["a POST with a body says so", { method: "POST", path: "/apis/apps/v1/namespaces/d/deployments", headers: {}, body: true }, { method: "POST", path: "/apis/apps/v1/namespaces/d/deployments", body: true }],
  ["a method the proxy never sends is refused", { method: "CONNECT", path: "/", headers: {} }, /is not proxied/],
  ["a relative path is refused", { method: "GET", path: "api/v1/pods", headers: {} }, /absolute path on the member/],
  ["a path naming another host (//host) is refused", { method: "GET", path: "//evil.example/x", headers: {} }, /absolute path on the member/],
  ["a path with a line break is refused", { method: "GET", path: "/a\r\nHost: x", headers: {} }, /absolute path on the member/],
  ["a header value with a line break is refused", { method: "GET", path: "/", headers: { "x-a": "1\r\nx-b: 2" } }, /not a header value/],
  ["a header name that is not a token is refused", { method: "GET", path: "/", headers: { "x a": "1" } }, /not a token/],
  ["a request that is not an object is refused", ["GET", "/"], /not an object/],
];
for (const [name, head, want] of requests) {
  test(name, () => {
    if (want instanceof RegExp) return assert.throws(() => parseRequestHead(enc(head)), (e: Error) => e instanceof ProtocolError && want.test(e.message));
    const r = parseRequestHead(enc(head));
    assert.deepEqual({ method: r.method, path: r.path, body: r.body }, want);
  });
}

test("header names come out lower-case and lists stay lists", () => {
  assert.deepEqual(parseRequestHead(enc({ method: "GET", path: "/", headers: { "Impersonate-Group": ["a", "b"] } })).headers, { "impersonate-group": ["a", "b"] });
});

const responses: Array<[string, unknown, boolean]> = [
  ["a response status in 100..599 is taken", { status: 404, headers: { "content-type": "application/json" } }, true],
  ["a response status of 600 is refused", { status: 600, headers: {} }, false],
  ["a response status that is not an integer is refused", { status: "200", headers: {} }, false],
  ["a response without headers is refused", { status: 200 }, false],
];
for (const [name, head, ok] of responses) test(name, () => (ok ? assert.ok(parseResponseHead(enc(head))) : assert.throws(() => parseResponseHead(enc(head)), ProtocolError)));

test("a reset keeps an error code and drops anything else", () => {
  assert.deepEqual(parseReset(enc({ code: "ECONNREFUSED" })), { code: "ECONNREFUSED" });
  assert.deepEqual(parseReset(enc({ code: "no spaces <b>" })), {});
  assert.deepEqual(parseReset(new TextEncoder().encode("not json")), {});
  assert.deepEqual(parseReset(new Uint8Array(0)), {});
});

test("a body is split into pieces no bigger than the limit", () => {
  assert.deepEqual([...chunks(new Uint8Array(10), 4)].map((c) => c.length), [4, 4, 2]);
  assert.deepEqual([...chunks(new Uint8Array(0), 4)], []);
});

const urls: Array<[string, string, string | undefined]> = [
  ["a cluster's tunnel path names the cluster", "/apis/cluster.karmada.io/v1alpha1/clusters/member3/tunnel", "member3"],
  ["a query does not change it", "/apis/cluster.karmada.io/v1alpha1/clusters/member3/tunnel?x=1", "member3"],
  ["the proxy path is not a tunnel", "/apis/cluster.karmada.io/v1alpha1/clusters/member3/proxy/api", undefined],
  ["an encoded slash in the name is not a cluster name", "/apis/cluster.karmada.io/v1alpha1/clusters/a%2Fb/tunnel", undefined],
  ["an upper-case name is not a cluster name", "/apis/cluster.karmada.io/v1alpha1/clusters/Member3/tunnel", undefined],
  ["a malformed escape is not a cluster name", "/apis/cluster.karmada.io/v1alpha1/clusters/%zz/tunnel", undefined],
];
for (const [name, url, want] of urls) test(name, () => assert.equal(tunnelCluster(url), want));

test("tunnelPath and tunnelCluster agree", () => assert.equal(tunnelCluster(tunnelPath("edge-1.eu")), "edge-1.eu"));

const identities: Array<[string, string, string, boolean]> = [
  ["an agent's ServiceAccount may hold its own cluster's tunnel", "system:serviceaccount:karmada-cluster:flotilla-agent-member3", "member3", true],
  ["an agent's ServiceAccount may not hold another cluster's tunnel", "system:serviceaccount:karmada-cluster:flotilla-agent-member3", "member4", false],
  ["an agent's ServiceAccount may not hold the tunnel of a cluster whose name extends its own", "system:serviceaccount:karmada-cluster:flotilla-agent-member3", "member3x", false],
  ["another identity is left to RBAC", "admin", "member4", true],
  ["a ServiceAccount of another namespace is left to RBAC", "system:serviceaccount:ops:flotilla-agent-member3", "member4", true],
];
for (const [name, user, cluster, want] of identities) test(name, () => assert.equal(identityMayTunnel(user, cluster), want));
