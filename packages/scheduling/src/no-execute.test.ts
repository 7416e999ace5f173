import { test } from "node:test";
import assert from "node:assert/strict";
import { rfc3339, type Taint, type Toleration } from "@flotilla/api";
import { evictionDecision, type EvictionDecision } from "./no-execute.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (ms: number) => rfc3339(T0 + ms);
const unreachable = (addedMs: number): Taint => ({ key: "cluster.karmada.io/unreachable", effect: "NoExecute", timeAdded: at(addedMs) });
const notReady = (addedMs: number): Taint => ({ key: "cluster.karmada.io/not-ready", effect: "NoExecute", timeAdded: at(addedMs) });
const terminating: Taint = { key: "cluster.karmada.io/terminating", effect: "NoExecute", timeAdded: at(0) };
const noSchedule: Taint = { key: "cluster.karmada.io/unreachable", effect: "NoSchedule", timeAdded: at(0) };
const tol = (key: string, seconds?: number): Toleration => ({ key, operator: "Exists", effect: "NoExecute", ...(seconds !== undefined ? { tolerationSeconds: seconds } : {}) });
const defaults = [tol("cluster.karmada.io/not-ready", 300), tol("cluster.karmada.io/unreachable", 300)];

type Want = { kind: EvictionDecision["kind"]; at?: number; taint?: string };
const cases: Array<[string, Taint[], Toleration[] | undefined, number, Want]> = [
  ["a cluster with only NoSchedule taints needs no decision", [noSchedule], [], T0, { kind: "none" }],
  ["a NoExecute taint nobody tolerates evicts now", [unreachable(0)], [], T0, { kind: "evict", taint: "cluster.karmada.io/unreachable" }],
  ["a binding without tolerations is evicted now", [unreachable(0)], undefined, T0, { kind: "evict", taint: "cluster.karmada.io/unreachable" }],
  ["the terminating taint is not covered by the default tolerations", [terminating], defaults, T0, { kind: "evict", taint: "cluster.karmada.io/terminating" }],
  ["a toleration of 300 s waits until timeAdded + 300 s", [unreachable(0)], defaults, T0 + 10_000, { kind: "wait", at: T0 + 300_000 }],
  ["a toleration of 300 s evicts once timeAdded + 300 s has passed", [unreachable(0)], defaults, T0 + 300_000, { kind: "evict", taint: "cluster.karmada.io/unreachable" }],
  ["a toleration of 0 s evicts at once", [unreachable(0)], [tol("cluster.karmada.io/unreachable", 0)], T0, { kind: "evict" }],
  ["a toleration without seconds tolerates forever", [unreachable(0)], [tol("cluster.karmada.io/unreachable")], T0 + 86_400_000, { kind: "never" }],
  [
    "the earliest expiry over all tolerated taints wins",
    [unreachable(0), notReady(100_000)],
    [tol("cluster.karmada.io/unreachable", 600), tol("cluster.karmada.io/not-ready", 60)],
    T0,
    { kind: "wait", at: T0 + 160_000, taint: "cluster.karmada.io/not-ready" },
  ],
  [
    "one Exists toleration with an empty key covers every taint and expires per taint",
    [unreachable(0), notReady(50_000)],
    [{ operator: "Exists", effect: "NoExecute", tolerationSeconds: 60 }],
    T0 + 30_000,
    { kind: "wait", at: T0 + 60_000, taint: "cluster.karmada.io/unreachable" },
  ],
  [
    "a taint tolerated forever does not shorten nor lengthen another taint's expiry",
    [unreachable(0), notReady(0)],
    [tol("cluster.karmada.io/unreachable"), tol("cluster.karmada.io/not-ready", 60)],
    T0,
    { kind: "wait", at: T0 + 60_000, taint: "cluster.karmada.io/not-ready" },
  ],
  [
    "one untolerated taint evicts even when the others are tolerated forever",
    [unreachable(0), { key: "maintenance", effect: "NoExecute", timeAdded: at(0) }],
    [tol("cluster.karmada.io/unreachable")],
    T0,
    { kind: "evict", taint: "maintenance" },
  ],
  ["a tolerated taint without timeAdded never expires", [{ key: "cluster.karmada.io/unreachable", effect: "NoExecute" }], defaults, T0 + 86_400_000, { kind: "never" }],
];

for (const [name, taints, tolerations, now, want] of cases) {
  test(name, () => {
    const d = evictionDecision(taints, tolerations, now);
    assert.equal(d.kind, want.kind);
    if (want.at !== undefined) assert.equal(d.kind === "wait" && d.at, want.at);
    if (want.taint !== undefined) assert.equal((d.kind === "wait" || d.kind === "evict") && d.taint.key, want.taint);
  });
}
