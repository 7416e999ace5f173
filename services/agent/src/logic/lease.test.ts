import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@flotilla/api";
import { microTime } from "@flotilla/api";
import { renewIntervalMs, renewedLease } from "./lease.js";

const now = new Date("2026-11-24T10:00:00.123Z");

test("a first renewal creates karmada-cluster/<cluster> held by the cluster", () => {
  const l = renewedLease("member3", undefined, now, 40) as KubeObject & { spec: Record<string, unknown> };
  assert.deepEqual(l.metadata, { name: "member3", namespace: "karmada-cluster" });
  assert.deepEqual(l.spec, { holderIdentity: "member3", leaseDurationSeconds: 40, renewTime: "2026-11-24T10:00:00.123000Z", acquireTime: "2026-11-24T10:00:00.123000Z" });
});

test("a renewal moves renewTime and keeps the version read and the other fields", () => {
  const existing = { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: "member3", namespace: "karmada-cluster", resourceVersion: "12" }, spec: { holderIdentity: "member3", leaseDurationSeconds: 40, acquireTime: "a", renewTime: "old", leaseTransitions: 1 } } as KubeObject;
  const l = renewedLease("member3", existing, now, 40) as KubeObject & { spec: Record<string, unknown> };
  assert.equal(l.metadata.resourceVersion, "12");
  assert.equal(l.spec.renewTime, microTime(now));
  assert.equal(l.spec.acquireTime, "a");
  assert.equal(l.spec.leaseTransitions, 1);
});

const intervals: [string, number, number | undefined, number][] = [
  ["the lease is renewed every quarter of its duration by default", 40, undefined, 10_000],
  ["a fraction of a half renews twice per duration", 40, 0.5, 20_000],
  ["a tiny lease is still renewed at least every millisecond", 0, undefined, 1],
];
for (const [name, seconds, fraction, want] of intervals) test(name, () => assert.equal(renewIntervalMs(seconds, fraction), want));
