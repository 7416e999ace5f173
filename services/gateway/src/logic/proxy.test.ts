import { test } from "node:test";
import assert from "node:assert/strict";
import { proxyTarget, requestHeaders, responseHeaders, unreachableReason } from "./proxy.js";

const P = "/apis/cluster.karmada.io/v1alpha1/clusters/";

test("proxied paths: the member's path and query, re-encoded, streaming for watches and followed logs", () => {
  const cases: Array<[string, string, { cluster: string; path: string; streaming: boolean }]> = [
    ["a list of pods", `${P}member1/proxy/api/v1/pods`, { cluster: "member1", path: "/api/v1/pods", streaming: false }],
    ["no path is the member's root", `${P}member1/proxy`, { cluster: "member1", path: "/", streaming: false }],
    ["a trailing slash is kept", `${P}member1/proxy/api/`, { cluster: "member1", path: "/api/", streaming: false }],
    ["the query is kept, re-encoded", `${P}member1/proxy/api/v1/pods?labelSelector=app%3Dnginx&limit=5`, { cluster: "member1", path: "/api/v1/pods?labelSelector=app%3Dnginx&limit=5", streaming: false }],
    ["watch=true streams", `${P}m/proxy/apis/apps/v1/deployments?watch=true`, { cluster: "m", path: "/apis/apps/v1/deployments?watch=true", streaming: true }],
    ["watch=1 streams", `${P}m/proxy/api/v1/pods?watch=1`, { cluster: "m", path: "/api/v1/pods?watch=1", streaming: true }],
    ["a followed log streams", `${P}m/proxy/api/v1/namespaces/d/pods/p/log?follow=true`, { cluster: "m", path: "/api/v1/namespaces/d/pods/p/log?follow=true", streaming: true }],
    ["doubled slashes name nothing", `${P}m/proxy//api//v1`, { cluster: "m", path: "/api/v1", streaming: false }],
    ["a host after the prefix stays a path", `${P}m/proxy//evil.example.com/x`, { cluster: "m", path: "/evil.example.com/x", streaming: false }],
    ["an absolute URL stays a path", `${P}m/proxy/http://evil.example.com/x`, { cluster: "m", path: "/http:/evil.example.com/x", streaming: false }],
    ["@ is encoded, never a userinfo", `${P}m/proxy/@evil.example.com/x`, { cluster: "m", path: "/%40evil.example.com/x", streaming: false }],
    ["a port in a pod proxy name keeps its colon", `${P}m/proxy/api/v1/namespaces/d/pods/p:8080/proxy/`, { cluster: "m", path: "/api/v1/namespaces/d/pods/p:8080/proxy/", streaming: false }],
    ["a space is encoded", `${P}m/proxy/a%20b`, { cluster: "m", path: "/a%20b", streaming: false }],
  ];
  for (const [name, url, want] of cases) assert.deepEqual(proxyTarget(url), want, name);
});

test("proxied paths that could leave the member's API are refused as 400 naming the path", () => {
  const cases: Array<[string, string, RegExp]> = [
    ["a .. segment", `${P}m/proxy/api/../../secret`, /must not contain a "\.\." segment/],
    ["an encoded .. segment", `${P}m/proxy/api/%2e%2e/x`, /"\.\." segment/],
    ["a . segment", `${P}m/proxy/./api`, /"\." segment/],
    ["an encoded slash", `${P}m/proxy/api%2F..%2Fx`, /encoded "\/"/],
    ["an encoded backslash", `${P}m/proxy/a%5Cb`, /encoded/],
    ["a control character", `${P}m/proxy/a%0d%0aHost:x`, /control characters/],
    ["a malformed escape", `${P}m/proxy/a%zz`, /malformed percent-escape/],
    ["another subresource", `${P}m/status`, /not a cluster proxy path/],
  ];
  for (const [name, url, want] of cases) {
    assert.throws(
      () => proxyTarget(url),
      (e: Error & { causes?: Array<{ field: string }> }) => e.name === "BadRequestError" && want.test(e.message) && e.causes?.[0]?.field === "path",
      name,
    );
  }
});

test("request headers: the caller's credentials and hop-by-hop fields stay behind; the caller is impersonated", () => {
  const got = requestHeaders(
    {
      authorization: "Bearer caller-token",
      cookie: "a=b",
      host: "gateway:8080",
      connection: "keep-alive, x-private",
      "x-private": "1",
      "keep-alive": "timeout=5",
      "transfer-encoding": "chunked",
      "proxy-authorization": "Basic x",
      te: "trailers",
      upgrade: "websocket",
      "impersonate-user": "root",
      "impersonate-group": "system:masters",
      "x-remote-user": "root",
      accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
      "content-type": "application/json",
      "content-length": "12",
      "user-agent": "kubectl/v1.32",
    },
    { name: "alice", groups: ["dev", "system:authenticated"] },
  );
  assert.deepEqual(got, {
    accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
    "content-type": "application/json",
    "content-length": "12",
    "user-agent": "kubectl/v1.32",
    "impersonate-user": "alice",
    "impersonate-group": ["dev"],
  });
  assert.deepEqual(requestHeaders({}, { name: "bob", groups: ["system:authenticated"] }), { "impersonate-user": "bob" });
});

test("response headers: end-to-end ones are copied, hop-by-hop and cookies are not", () => {
  assert.deepEqual(responseHeaders({ "content-type": "application/json", "content-length": "2", connection: "close", "transfer-encoding": "chunked", "set-cookie": ["s=1"], "audit-id": "x" }), {
    "content-type": "application/json",
    "content-length": "2",
    "audit-id": "x",
  });
});

test("why a member did not answer is said without its address", () => {
  assert.equal(unreachableReason(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:7101"), { code: "ECONNREFUSED" })), "connection refused");
  assert.equal(unreachableReason(Object.assign(new Error("x"), { name: "TimeoutError" })), "it did not answer in time");
  assert.equal(unreachableReason(new Error("boom")), "the request failed");
});
