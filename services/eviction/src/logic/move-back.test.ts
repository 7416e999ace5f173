import { test } from "node:test";
import assert from "node:assert/strict";
import type { AnyResourceBinding } from "@flotilla/api";
import { RECHECK_MS, decideMoveBack, returnCluster, type MoveBackInput, type ReturnCluster } from "./move-back.js";

const NOW = Date.parse("2026-11-27T12:00:00Z");
const before = [
  { name: "member1", replicas: 1 },
  { name: "member2", replicas: 2 },
];
type Agg = { clusterName: string; health: string; status?: { readyReplicas?: number } };
const rb = (clusters: { name: string; replicas: number }[], o: { replicas?: number; type?: string; tasks?: number; agg?: Agg[]; deleting?: boolean } = {}): AnyResourceBinding => ({
  apiVersion: "work.karmada.io/v1alpha2",
  kind: "ResourceBinding",
  metadata: { name: "nginx-deployment", namespace: "default", ...(o.deleting ? { deletionTimestamp: "2026-11-27T11:00:00Z" } : {}) },
  spec: {
    replicas: o.replicas ?? 3,
    placement: { replicaScheduling: { replicaSchedulingType: o.type ?? "Divided" } },
    clusters,
    ...(o.tasks ? { gracefulEvictionTasks: [{ fromCluster: "member1" }] } : {}),
  },
  status: { aggregatedStatus: o.agg ?? [] },
});
const healthy: ReturnCluster = { ready: true, readySince: NOW - 120_000, tainted: false, deleting: false };
const input = (o: Partial<MoveBackInput>): MoveBackInput => ({
  binding: rb([{ name: "member2", replicas: 3 }]),
  config: { stabilizationSeconds: 60, maxConcurrent: 1 },
  before,
  surge: undefined,
  clusters: new Map([["member1", healthy]]),
  slot: { granted: true, held: 0 },
  surgeTimeoutMs: 300_000,
  now: NOW,
  ...o,
});
const surge = { replicas: 3, from: [{ name: "member2", replicas: 3 }], startedAt: NOW - 10_000 };
const surged = [
  { name: "member1", replicas: 1 },
  { name: "member2", replicas: 3 },
];

test("move-back decisions", () => {
  const cases: [string, Partial<MoveBackInput>, ReturnType<typeof decideMoveBack>][] = [
    ["nothing recorded: nothing to do", { before: undefined }, { kind: "none" }],
    ["a surge without a record is dropped", { before: undefined, surge }, { kind: "forget", why: "no placement before the failover is recorded" }],
    ["the policy stopped asking", { config: undefined }, { kind: "forget", why: "the policy does not ask for move-back" }],
    ["a Duplicated placement has nothing to return", { binding: rb([{ name: "member2", replicas: 3 }], { type: "Duplicated" }) }, { kind: "forget", why: "only Divided placements move back" }],
    ["a deleting binding is left alone", { binding: rb([{ name: "member2", replicas: 3 }], { deleting: true }) }, { kind: "none" }],
    ["the failover is still going on (a task)", { binding: rb([{ name: "member2", replicas: 3 }], { tasks: 1 }) }, { kind: "none" }],
    ["scaled since", { binding: rb([{ name: "member2", replicas: 5 }], { replicas: 5 }) }, { kind: "forget", why: "the replica count changed since the failover (3 → 5)" }],
    ["already back", { binding: rb(before) }, { kind: "forget", why: "the placement is back already" }],
    ["member1 deleted", { clusters: new Map() }, { kind: "forget", why: "cluster member1 is gone" }],
    ["member1 not Ready", { clusters: new Map([["member1", { ...healthy, ready: false, readySince: undefined }]]) }, { kind: "wait", ms: RECHECK_MS, why: "cluster member1 is not Ready and untainted" }],
    ["member1 cordoned", { clusters: new Map([["member1", { ...healthy, tainted: true }]]) }, { kind: "wait", ms: RECHECK_MS, why: "cluster member1 is not Ready and untainted" }],
    ["Ready for 20 s of 60", { clusters: new Map([["member1", { ...healthy, readySince: NOW - 20_000 }]]) }, { kind: "wait", ms: 40_000, why: "stabilization window" }],
    ["a failed move-back 10 s ago restarts the window", { failedAt: NOW - 10_000 }, { kind: "wait", ms: 50_000, why: "stabilization window" }],
    ["stable for the window, no slot asked for yet: claim one of maxConcurrent", { slot: undefined }, { kind: "claim", max: 1 }],
    ["claims one of two slots when maxConcurrent is 2", { slot: undefined, config: { stabilizationSeconds: 60, maxConcurrent: 2 } }, { kind: "claim", max: 2 }],
    ["not Ready yet: no slot is claimed", { slot: undefined, clusters: new Map([["member1", { ...healthy, ready: false, readySince: undefined }]]) }, { kind: "wait", ms: RECHECK_MS, why: "cluster member1 is not Ready and untainted" }],
    ["in the window: no slot is claimed", { slot: undefined, clusters: new Map([["member1", { ...healthy, readySince: NOW - 20_000 }]]) }, { kind: "wait", ms: 40_000, why: "stabilization window" }],
    ["the fleet's slot is taken", { slot: { granted: false, held: 1 } }, { kind: "wait", ms: RECHECK_MS, slot: true, why: "1 binding(s) moving back already (maxConcurrent 1)" }],
    ["the fleet's slots are taken: claims again after the configured wait", { slot: { granted: false, held: 2 }, slotRecheckMs: 700, config: { stabilizationSeconds: 60, maxConcurrent: 2 } }, { kind: "wait", ms: 700, slot: true, why: "2 binding(s) moving back already (maxConcurrent 2)" }],
    ["two slots, one taken: granted, go", { slot: { granted: true, held: 1 }, config: { stabilizationSeconds: 60, maxConcurrent: 2 } }, { kind: "surge", clusters: surged, surge: { replicas: 3, from: [{ name: "member2", replicas: 3 }], startedAt: NOW } }],
    ["a surging binding does not claim again", { slot: undefined, binding: rb(surged), surge }, { kind: "wait", ms: 2000, why: "waiting for the returning copies to be healthy" }],
    ["stable for the window: surge", {}, { kind: "surge", clusters: surged, surge: { replicas: 3, from: [{ name: "member2", replicas: 3 }], startedAt: NOW } }],
    [
      "a third cluster that took replicas stays in the surge",
      { binding: rb([{ name: "member2", replicas: 2 }, { name: "member3", replicas: 1 }]) },
      { kind: "surge", clusters: [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }, { name: "member3", replicas: 1 }], surge: { replicas: 3, from: [{ name: "member2", replicas: 2 }, { name: "member3", replicas: 1 }], startedAt: NOW } },
    ],
    ["surging, member1 not reporting yet", { binding: rb(surged, { agg: [{ clusterName: "member2", health: "Healthy", status: { readyReplicas: 3 } }] }), surge }, { kind: "wait", ms: 2000, why: "waiting for the returning copies to be healthy" }],
    [
      "surging, member1 Healthy but 0 ready",
      { binding: rb(surged, { agg: [{ clusterName: "member1", health: "Healthy", status: { readyReplicas: 0 } }, { clusterName: "member2", health: "Healthy", status: { readyReplicas: 3 } }] }), surge },
      { kind: "wait", ms: 2000, why: "waiting for the returning copies to be healthy" },
    ],
    [
      "surging, both healthy: finish",
      { binding: rb(surged, { agg: [{ clusterName: "member1", health: "Healthy", status: { readyReplicas: 1 } }, { clusterName: "member2", health: "Healthy", status: { readyReplicas: 3 } }] }), surge },
      { kind: "finish", clusters: before },
    ],
    ["surging past the timeout: revert", { binding: rb(surged), surge: { ...surge, startedAt: NOW - 300_001 } }, { kind: "revert", clusters: [{ name: "member2", replicas: 3 }], why: "the returning copies were not healthy within 300s" }],
    ["scaled during the surge", { binding: rb(surged, { replicas: 4 }), surge }, { kind: "forget", why: "the replica count changed during the move-back (3 → 4)" }],
  ];
  for (const [name, o, want] of cases) assert.deepEqual(decideMoveBack(input(o)), want, name);
});

test("a cluster's readiness for the way back", () => {
  assert.equal(returnCluster(undefined), undefined);
  assert.deepEqual(
    returnCluster({ metadata: { name: "m" }, spec: { taints: [{ key: "k", effect: "PreferNoSchedule" }] }, status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-11-27T11:58:00Z" }] } } as never),
    { ready: true, readySince: NOW - 120_000, tainted: false, deleting: false },
  );
  assert.deepEqual(returnCluster({ metadata: { name: "m" }, spec: { taints: [{ key: "k", effect: "NoSchedule" }] }, status: { conditions: [{ type: "Ready", status: "False" }] } } as never), { ready: false, readySince: undefined, tainted: true, deleting: false });
});
