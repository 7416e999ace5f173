import { test } from "node:test";
import assert from "node:assert/strict";
import type { Cluster, KubeObject } from "./types.js";
import { credentialHolder, endpointOf, endpointProblem, memberEndpoint, namesSecret } from "./member-endpoint.js";

const cluster = (spec: Cluster["spec"]): Cluster => ({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1" }, spec });
const secret = (data?: Record<string, string>, stringData?: Record<string, string>): KubeObject => ({ apiVersion: "v1", kind: "Secret", metadata: { name: "m1", namespace: "karmada-cluster" }, ...(data ? { data } : {}), ...(stringData ? { stringData } : {}) });
const ref = { namespace: "karmada-cluster", name: "m1" };
const b64 = (s: string) => Buffer.from(s).toString("base64");

const cases: [string, Cluster, KubeObject | undefined, unknown][] = [
  ["the token comes from data.token (base64)", cluster({ apiEndpoint: "https://m1:6443", secretRef: ref }), secret({ token: b64("t0k") }), { ok: true, endpoint: { server: "https://m1:6443", token: "t0k" } }],
  ["stringData.token is accepted too", cluster({ apiEndpoint: "https://m1:6443", secretRef: ref }), secret(undefined, { token: "t0k" }), { ok: true, endpoint: { server: "https://m1:6443", token: "t0k" } }],
  ["caBundle, insecureSkipTLSVerification and proxyURL are carried", cluster({ apiEndpoint: "https://m1:6443", secretRef: ref, insecureSkipTLSVerification: true, proxyURL: "http://proxy:3128" }), secret({ token: b64("t"), caBundle: b64("PEM") }), { ok: true, endpoint: { server: "https://m1:6443", token: "t", caData: "PEM", insecureSkipTLSVerify: true, proxyURL: "http://proxy:3128" } }],
  ["no secretRef means no token", cluster({ apiEndpoint: "https://m1:8443" }), undefined, { ok: true, endpoint: { server: "https://m1:8443" } }],
  ["no apiEndpoint cannot be reached", cluster({ secretRef: ref }), secret({ token: b64("t") }), { ok: false, reason: "the cluster has no spec.apiEndpoint" }],
  ["a missing Secret is named in the reason", cluster({ apiEndpoint: "https://m1", secretRef: ref }), undefined, { ok: false, reason: "the secret karmada-cluster/m1 named by spec.secretRef does not exist" }],
  ["a Secret without a token is named in the reason", cluster({ apiEndpoint: "https://m1", secretRef: ref }), secret({ other: b64("x") }), { ok: false, reason: "the secret karmada-cluster/m1 has no token" }],
];
for (const [name, c, s, want] of cases) test(name, () => assert.deepEqual(endpointOf(c, s), want));

test("member endpoints: https, http only as allowed, never link-local, unspecified or multicast, no credentials in the URL", () => {
  const cases: Array<[string, "none" | "loopback" | "any", RegExp | undefined]> = [
    ["https://m1:6443", "none", undefined],
    ["https://10.0.0.7:6443", "none", undefined],
    ["http://127.0.0.1:7101", "none", /is http: members are reached over https/],
    ["http://127.0.0.1:7101", "loopback", undefined],
    ["http://[::1]:7101", "loopback", undefined],
    ["http://localhost:7101", "loopback", undefined],
    ["http://10.0.0.7:7101", "loopback", /not loopback/],
    ["http://10.0.0.7:7101", "any", undefined],
    ["gopher://127.0.0.1:70", "any", /scheme "gopher"/],
    ["file:///etc/passwd", "any", /scheme "file"/],
    ["https://169.254.169.254/latest/meta-data", "any", /link-local/],
    ["http://169.254.169.254/", "any", /link-local/],
    ["https://[fe80::1]:6443", "any", /link-local/],
    ["https://[::ffff:169.254.169.254]/", "any", /link-local/],
    ["https://0.0.0.0:6443", "any", /unspecified/],
    ["https://224.0.0.1/", "any", /multicast/],
    ["https://user:pw@m1:6443", "any", /credentials/],
    ["not a url", "any", /is not a URL/],
  ];
  for (const [url, allowHttp, want] of cases) {
    const got = endpointProblem(url, { allowHttp });
    if (want) assert.match(got ?? "", want, url);
    else assert.equal(got, undefined, url);
  }
  // and endpointOf refuses them before any token is read
  const r = endpointOf(cluster({ apiEndpoint: "https://169.254.169.254/", secretRef: ref }), secret({ token: b64("t") }));
  assert.deepEqual(r, { ok: false, reason: "spec.apiEndpoint points at a link-local address" });
  assert.deepEqual(endpointOf(cluster({ apiEndpoint: "https://m1", proxyURL: "gopher://x" }), undefined), { ok: false, reason: 'spec.proxyURL has the scheme "gopher": http, https or socks5' });
});

test("a Secret owned by another Cluster is not sent to this one", () => {
  const c = { ...cluster({ apiEndpoint: "https://evil:6443", secretRef: ref }), metadata: { name: "evil", uid: "uid-evil" } };
  const s = { ...secret({ token: b64("t") }), metadata: { name: "m1", namespace: "karmada-cluster", ownerReferences: [{ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", name: "m1", uid: "uid-m1" }] } };
  assert.deepEqual(endpointOf(c, s), { ok: false, reason: 'the secret karmada-cluster/m1 belongs to cluster "m1"' });
  assert.equal(endpointOf({ ...c, metadata: { name: "m1", uid: "uid-m1" } }, s).ok, true);
});

test("an unowned Secret named by several Clusters serves the Cluster of its own name, else the oldest, else the first by name", () => {
  const c = (name: string, creationTimestamp: string, secretRef = ref): Cluster => ({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name, creationTimestamp }, spec: { apiEndpoint: "https://x", secretRef } });
  const cases: Array<[string, Cluster[], string | undefined]> = [
    ["its own name wins over an older Cluster", [c("evil", "2026-01-01T00:00:00Z"), c("m1", "2026-06-01T00:00:00Z")], "m1"],
    ["else the oldest", [c("b", "2026-06-01T00:00:00Z"), c("a", "2026-07-01T00:00:00Z")], "b"],
    ["same second: the first by name", [c("zeta", "2026-06-01T00:00:00Z"), c("alpha", "2026-06-01T00:00:00Z")], "alpha"],
    ["none", [], undefined],
  ];
  for (const [name, claimants, want] of cases) assert.equal(credentialHolder("m1", claimants)?.metadata.name, want, name);
  assert.ok(namesSecret(c("x", ""), "karmada-cluster", "m1"));
  assert.ok(!namesSecret(c("x", ""), "other", "m1"));
  assert.ok(!namesSecret(c("x", "", { namespace: "karmada-cluster", name: "m2" }), "karmada-cluster", "m1"));
});

test("memberEndpoint: an unowned Secret serves only its holder; an owned one its owner, whoever else names it", () => {
  const c = (name: string, creationTimestamp: string, uid = `uid-${name}`): Cluster => ({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name, uid, creationTimestamp }, spec: { apiEndpoint: "https://x", secretRef: ref } });
  const s = secret({ token: b64("t") });
  const [m1, evil] = [c("m1", "2026-06-01T00:00:00Z"), c("evil", "2026-01-01T00:00:00Z")];
  assert.equal(memberEndpoint(m1, s, [m1, evil]).ok, true);
  assert.deepEqual(memberEndpoint(evil, s, [m1, evil]), { ok: false, reason: 'the secret karmada-cluster/m1 is the credential of cluster "m1"' });
  const owned = { ...s, metadata: { ...s.metadata, ownerReferences: [{ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", name: "m1", uid: "uid-m1" }] } };
  assert.equal(memberEndpoint(m1, owned, [m1, evil]).ok, true);
  assert.equal(memberEndpoint(evil, owned, [m1, evil]).ok, false);
});
