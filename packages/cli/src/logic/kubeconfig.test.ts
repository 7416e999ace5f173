import { test } from "node:test";
import assert from "node:assert/strict";
import { kubeconfigPaths, parseKubeconfig, resolveConnection } from "./kubeconfig.js";

const CA = Buffer.from("-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n").toString("base64");
const main = parseKubeconfig(
  `apiVersion: v1
kind: Config
clusters:
- name: flotilla
  cluster: {server: "https://127.0.0.1:8080/", certificate-authority-data: ${CA}}
- name: other
  cluster: {server: "http://10.0.0.1:8080", certificate-authority: ca.crt, insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: t0k}
- name: filed
  user: {tokenFile: tok}
- name: cert
  user: {client-certificate-data: abc}
contexts:
- name: flotilla
  context: {cluster: flotilla, user: admin}
- name: ops
  context: {cluster: other, user: filed, namespace: ops}
- name: certs
  context: {cluster: flotilla, user: cert}
- name: broken
  context: {cluster: nowhere, user: admin}
current-context: flotilla
`,
  "/home/u/.flotilla/kubeconfig",
);

test("a context gives the server, its CA and the user's token", () => {
  const cases: Array<[string, Parameters<typeof resolveConnection>[1], unknown]> = [
    ["the current context; a trailing slash goes, the CA data is decoded", {}, { server: "https://127.0.0.1:8080", token: "t0k", caData: Buffer.from(CA, "base64").toString(), insecure: false, namespace: "default", context: "flotilla" }],
    ["--context picks another; files named in it are relative to the kubeconfig", { context: "ops" }, { server: "http://10.0.0.1:8080", tokenFile: "/home/u/.flotilla/tok", caFile: "/home/u/.flotilla/ca.crt", insecure: true, namespace: "ops", context: "ops" }],
    ["--namespace, --server and --token override the context", { namespace: "web", server: "http://127.0.0.1:9", token: "flag" }, { server: "http://127.0.0.1:9", token: "flag", caData: Buffer.from(CA, "base64").toString(), insecure: false, namespace: "web", context: "flotilla" }],
  ];
  for (const [name, o, want] of cases) assert.deepEqual(resolveConnection([main], o), want, name);
});

test("what cannot work is said naming the context, cluster or user", () => {
  const cases: Array<[string, Parameters<typeof resolveConnection>[1], RegExp]> = [
    ["an unknown context", { context: "nope" }, /context "nope" is not in the kubeconfig/],
    ["a context naming no cluster", { context: "broken" }, /names cluster "nowhere", which the kubeconfig does not define/],
    ["a client certificate", { context: "certs" }, /client certificate or a plugin; flotilla sends bearer tokens only/],
  ];
  for (const [name, o, want] of cases) assert.throws(() => resolveConnection([main], o), want, name);
  assert.throws(() => resolveConnection([]), /has no current-context/);
  assert.throws(() => parseKubeconfig("clusters: {a: 1}", "k"), /k: clusters must be a list/);
  assert.throws(() => parseKubeconfig("[1, 2]", "k"), /not a kubeconfig/);
});

test("several files merge: the first definition of a name and the first current-context win", () => {
  const second = parseKubeconfig(
    `clusters:
- name: flotilla
  cluster: {server: "https://shadowed:1"}
- name: extra
  cluster: {server: "https://extra:6443"}
users: [{name: admin, user: {token: shadowed}}]
contexts: [{name: extra, context: {cluster: extra, user: admin}}]
current-context: extra
`,
    "/k2",
  );
  assert.equal(resolveConnection([main, second]).server, "https://127.0.0.1:8080");
  assert.deepEqual([resolveConnection([main, second], { context: "extra" }).server, resolveConnection([main, second], { context: "extra" }).token], ["https://extra:6443", "t0k"]);
  assert.equal(resolveConnection([second, main]).context, "extra");
});

test("where kubeconfigs are read from: the flag, else KUBECONFIG's list, else ~/.kube/config", () => {
  assert.deepEqual(kubeconfigPaths("/x", "/a:/b", "/home/u"), ["/x"]);
  assert.deepEqual(kubeconfigPaths(undefined, "/a::/b", "/home/u"), ["/a", "/b"]);
  assert.deepEqual(kubeconfigPaths(undefined, "", "/home/u"), ["/home/u/.kube/config"]);
});
