// What one Deployment may cost, from POST to every replica ready, counted by
// `budget.int.test.ts` (see harness.ts for how each measure is read). A change that needs more
// raises a number here in a commit of its own that says why; a change that needs less lowers it.
//
// The stack: 10 simulated members, one ClusterPropagationPolicy (Divided, weighted by available
// replicas, two clusters per binding), Deployments of 3 replicas. Per Deployment the pipeline
// writes the template, its ResourceBinding (created, claimed, scheduled, status), two Works
// (created, applied, status) and the template's status: 13–14 object writes in a burst, where
// several status changes fold into one write, and 18 one at a time. Each object write stores
// the object twice (`objects`, `outbox`) and marks its outbox row published (3 row writes);
// the binding's placement adds a placement_history row.
//
// The goal for a burst: ≤ 4 transactions, ≤ 30 row writes and ≤ 4 NATS messages.
import type { Measure } from "./harness.js";

export interface Budget {
  /** The most it may cost per Deployment. */
  max: number;
  /** Why it costs that much. */
  why: string;
}

export type PhaseBudget = Record<Measure, Budget>;

/** 200 Deployments POSTed 16 at a time, one replica of each service. */
export const BURST: PhaseBudget = {
  transactions: {
    max: 24,
    why: "measured 17.2–20.3: each reconcile takes and gives back its key lock in two statements of their own (≈ 19 of them); the rest are batched reads and writes",
  },
  writeTransactions: { max: 4.5, why: "measured 3.3–3.8: object writes share commits (flotilla_write_batch), with the relay marking rows published and the write's NOTIFY" },
  rowWrites: { max: 80, why: "measured 67–72: 14 object writes × 3 rows (objects, outbox, outbox published_at) plus the outbox rows' index entries of the published mark and a placement_history row" },
  statements: { max: 42, why: "measured 32–37: the key locks (≈ 19), batched reads by key, write batches, the relay's fetch and mark, watch polls" },
  natsMessages: { max: 1.6, why: "measured 0.6–1.3: the relay packs up to 256 wake-ups of one kind into a message" },
  outboxRows: { max: 15, why: "measured 13.2–14.0 object writes (see above)" },
  outboxBytes: { max: 26_000, why: "measured 21,400–22,700: the whole object in every outbox row, Works carrying the Deployment manifest" },
};

/** Deployments one at a time (each POSTed once the one before it is ready), one replica of each service. */
export const SINGLE: PhaseBudget = {
  transactions: { max: 200, why: "measured 159–172: nothing shares a commit; every write wakes every watch (a poll each), each reconcile locks and unlocks its key" },
  writeTransactions: { max: 56, why: "measured 45.7–48.7: 18 object writes, their NOTIFYs, the relay's published marks, timers" },
  rowWrites: { max: 125, why: "measured 106: 18 object writes × 3 rows, timers, a placement_history row" },
  statements: { max: 250, why: "measured 209–216: as transactions, plus the batched reads" },
  natsMessages: { max: 17, why: "measured 13.8–14.7: one message per relay pass, each carrying the writes of one kind" },
  outboxRows: { max: 20, why: "measured 18.2–18.3 object writes" },
  outboxBytes: { max: 35_000, why: "measured 30,800: as in a burst, over more writes" },
};
