// Retained heap per cached object, per cache (heap.int.test.ts measures them; issue 22). The goal
// is ≤ 300 MB per service at 20,000 Deployments and ≤ 1 GB at 100,000: a cache that grows with the
// Deployments must stay a few KB per object at most. Each budget is the measurement of 2026-11-29
// (`measured`, Node 24 on the 2-core VM, the median of the test's rounds; the higher one when runs
// differed) plus about 15 % for the noise between runs (up to 4 % for the caches listed from
// Postgres, up to 15 % for the key-only ones), rounded up; `why` says what one object costs and
// what it adds up to. A change that makes a cache hold more per object fails the test: raise its
// budget only with the reason written here.

export interface HeapBudget {
  /** Bytes of heap retained per cached object, at most. */
  bytes: number;
  /** What it was when the budget was set. */
  measured: number;
  why: string;
}

export const HEAP_BUDGET = {
  "gateway.rbac": {
    bytes: 1_200,
    measured: 1_050,
    why: "a RoleBinding kept as its subjects and roleRef (a Role as its rules), not the object: 5,000 bindings ≈ 5 MB",
  },
  "scheduler.clusters": {
    bytes: 7_800,
    measured: 6_800,
    why: "the whole frozen Cluster (every plugin reads some of it: apiEnablements, resourceSummary, models, taints, labels); clusters number in the tens or hundreds, not per Deployment",
  },
  "scheduler.bindingLedger": {
    bytes: 1_250,
    measured: 1_030,
    why: "per binding the informer's key and version and the ledger's placements (2 clusters) and request; 20,000 bindings ≈ 21 MB, 100,000 ≈ 107 MB",
  },
  "execution.clusters": {
    bytes: 14_400,
    measured: 12_500,
    why: "the whole Cluster, the Secret it names (token and CA) and the endpoint built from both; per cluster, not per Deployment",
  },
  "execution.memberObjects": {
    bytes: 2_700,
    measured: 2_310,
    why: "the member's Deployment as its API server answers, without managedFields (8,325 bytes with them, 3,250 without) and with the strings every object repeats kept once, and the applied record; two per Deployment on 2 clusters: 20,000 ≈ 92 MB, 100,000 ≈ 460 MB",
  },
  "runtime.seenVersions": {
    bytes: 420,
    measured: 362,
    why: "a key, the version written, the version reconciled (bigint) and its generation; bounded at 200,000 keys per controller (≈ 72 MB at most each)",
  },
  "runtime.lastSignatures": {
    bytes: 390,
    measured: 334,
    why: "a key and its last signature string (a cluster's NoExecute taints); bounded at 10,000 keys by default",
  },
  "runtime.workQueue": {
    bytes: 200,
    measured: 169,
    why: "a queued key in its namespace's turn of a lane and the dirty set (254 before the lanes); only while queued: a burst of 20,000 wake-ups ≈ 3.4 MB",
  },
  "binding.reconcileStarts": {
    bytes: 280,
    measured: 242,
    why: "a template key and a number; bounded at 200,000 templates",
  },
} satisfies Record<string, HeapBudget>;

export type CacheName = keyof typeof HEAP_BUDGET;
