import { test } from "node:test";
import assert from "node:assert/strict";
import type { Cluster, KubeObject } from "@flotilla/api";
import { endpointOf } from "./credentials.js";

const cluster = (spec: Cluster["spec"]): Cluster => ({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1" }, spec });
const secret = (data?: Record<string, string>, stringData?: Record<string, string>): KubeObject => ({ apiVersion: "v1", kind: "Secret", metadata: { name: "m1", namespace: "karmada-cluster" }, ...(data ? { data } : {}), ...(stringData ? { stringData } : {}) });
const ref = { namespace: "karmada-cluster", name: "m1" };
const b64 = (s: string) => Buffer.from(s).toString("base64");

const cases: [string, Cluster, KubeObject | undefined, unknown][] = [
  ["the token comes from data.token (base64)", cluster({ apiEndpoint: "https://m1:6443", secretRef: ref }), secret({ token: b64("t0k") }), { ok: true, endpoint: { server: "https://m1:6443", token: "t0k" } }],
  ["stringData.token is accepted too", cluster({ apiEndpoint: "https://m1:6443", secretRef: ref }), secret(undefined, { token: "t0k" }), { ok: true, endpoint: { server: "https://m1:6443", token: "t0k" } }],
  ["caBundle, insecureSkipTLSVerification and proxyURL are carried", cluster({ apiEndpoint: "https://m1:6443", secretRef: ref, insecureSkipTLSVerification: true, proxyURL: "http://proxy:3128" }), secret({ token: b64("t"), caBundle: b64("PEM") }), { ok: true, endpoint: { server: "https://m1:6443", token: "t", caData: "PEM", insecureSkipTLSVerify: true, proxyURL: "http://proxy:3128" } }],
  ["no secretRef means no token", cluster({ apiEndpoint: "http://m1:8080" }), undefined, { ok: true, endpoint: { server: "http://m1:8080" } }],
  ["no apiEndpoint cannot be reached", cluster({ secretRef: ref }), secret({ token: b64("t") }), { ok: false, reason: "the cluster has no spec.apiEndpoint" }],
  ["a missing Secret is named in the reason", cluster({ apiEndpoint: "https://m1", secretRef: ref }), undefined, { ok: false, reason: "the secret karmada-cluster/m1 named by spec.secretRef does not exist" }],
  ["a Secret without a token is named in the reason", cluster({ apiEndpoint: "https://m1", secretRef: ref }), secret({ other: b64("x") }), { ok: false, reason: "the secret karmada-cluster/m1 has no token" }],
];
for (const [name, c, s, want] of cases) test(name, () => assert.deepEqual(endpointOf(c, s), want));
