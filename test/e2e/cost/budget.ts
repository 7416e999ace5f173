// What one Deployment may cost, from POST to every replica ready, counted by
// `budget.int.test.ts` (see harness.ts for how each measure is read). A change that needs more
// raises a number here in a commit of its own that says why; a change that needs less lowers it.
//
// The stack: 10 simulated members, one ClusterPropagationPolicy (Divided, weighted by available
// replicas, two clusters per binding), Deployments of 3 replicas. Per Deployment the pipeline
// writes the template, its ResourceBinding (created, claimed, scheduled, status), two Works
// (created, applied, status) and the template's status: 13–15 object writes in a burst, where
// several status changes fold into one write, and 18–20 one at a time. Each object write stores
// the object twice (`objects`, `outbox`, bodies compressed in line: migration 015); the relay
// moves one cursor per pass (migration 014); the binding's placement adds a placement_history row.
//
// Each number stands about a quarter to a third above the highest measured (2026-11-29: the ranges
// come from local runs, some while other tests ran beside them, and from CI, where the test runs
// after the rest of the suite): the counts are deterministic in kind but not in amount (how many
// writes share a batch, how many wake-ups share a message, which replica takes a key depend on
// timing). `transactions` is the loosest (pg_stat_database, see harness.ts); `statements` and
// `writeTransactions` are exact.
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

export interface StackBudget {
  /** 200 Deployments POSTed 16 at a time. */
  burst: PhaseBudget;
  /** Deployments one at a time (each POSTed once the one before it is ready). */
  single: PhaseBudget;
}

export const ONE_REPLICA: StackBudget = {
  burst: {
    transactions: { max: 12, why: "measured 6.8–8.3 (11.6 before lists by label shared statements, 16.7 before the override policies came from an informer, 13.4–18.5 before the relay's cursor and in-line bodies): batched reads by key and lists by label, watch polls (each write wakes every watch of its kinds), timer polls, the key locks (one statement for the tries of a moment), the relay's fetch and cursor" },
    writeTransactions: { max: 5, why: "measured 2.2–3.8: object writes share commits (flotilla_write_batch, its NOTIFY inside), the relay's published marks" },
    rowWrites: { max: 42, why: "measured 29.0–33.8 (71.3 with a published mark per outbox row and 62.6 with bodies over 2 kB in TOAST chunks): 14 object writes × 2 rows (objects, outbox), a placement_history row, the relay's cursor, member leases" },
    statements: { max: 14, why: "measured 8.1–10.7 (13.4 before lists by label shared statements, 18.2 before the override policies came from an informer; 32.1–36.9 before the key locks shared statements): watch polls 2.8, batched reads 2.2, timer claims 1.7, write batches 1.5, key locks 1.4, the relay's fetch and cursor 2.1" },
    natsMessages: { max: 2.8, why: "measured 0.7–2.2 (0.6–1.3 while writes NOTIFYed once per tick of a process: now once per commit, the relay runs more often with fewer rows); up to 256 wake-ups of one kind a message" },
    outboxRows: { max: 18, why: "measured 13.3–14.3 object writes (see above)" },
    outboxBytes: { max: 29_000, why: "measured 21,700–23,300: the whole object in every outbox row, Works carrying the Deployment manifest" },
  },
  single: {
    transactions: { max: 135, why: "measured 90.9–101.8 (99.6–108.5 before lists by label shared statements, 94–116 before the override policies came from an informer): nothing shares a commit; each reconcile locks its key; a watch polls for each write of its kinds" },
    writeTransactions: { max: 52, why: "measured 31.5–40.3 (45.7–48.7 with a NOTIFY statement after each write): 19 object writes, the relay's published marks, timers" },
    rowWrites: { max: 85, why: "measured 61.9 (98.2–110.6 with published marks and TOAST chunks): 18 object writes × 2 rows, timers, the relay's cursor, member leases, a placement_history row" },
    statements: { max: 155, why: "measured 107.5–114.1 (114.6–122.3 before lists by label shared statements, 107–134 before the override policies came from an informer): batched reads, lists, writes, key locks, the relay, watch polls, timer claims" },
    natsMessages: { max: 21, why: "measured 14.5–16.5: one message per relay pass and kind" },
    outboxRows: { max: 23, why: "measured 18.0–18.9 object writes" },
    outboxBytes: { max: 39_000, why: "measured 30,300–31,900: as in a burst, over more writes" },
  },
};

/**
 * Three processes of every service on one database and stream. These counts vary more from run to
 * run than one replica's (which replica takes a key, keys tried again while another holds them,
 * how the three relays' passes fall): the budgets stand about a quarter above the highest of the
 * runs measured.
 */
export const THREE_REPLICAS: StackBudget = {
  burst: {
    transactions: { max: 26, why: "measured 15.6–20.7 (20.7 in CI, after the suite; 28.2 before the override policies came from an informer and lists by label shared statements; 28.1–38.9 before the relay's cursor): three of every watch and timer poller, a key another replica holds tried again" },
    writeTransactions: { max: 8, why: "measured 3.8–6.4: writes of three processes share fewer batches" },
    rowWrites: { max: 48, why: "measured 30.2–35.9 (71.2–84.3 with published marks and TOAST chunks): 14–17 object writes × 2 rows (replicas split a key's status changes into more writes), more timers and member leases" },
    statements: { max: 32, why: "measured 21.5–25.1 (25.1 in CI; 32.9 before the override policies came from an informer and lists by label shared statements): as one replica, three times the polls" },
    natsMessages: { max: 4, why: "measured 0.7–3.3: three relays' worth of smaller passes (one is active at a time)" },
    outboxRows: { max: 20, why: "measured 13.8–15.9 object writes: replicas split a key's status changes into more writes" },
    outboxBytes: { max: 33_000, why: "measured 22,400–26,100" },
  },
  single: {
    transactions: { max: 210, why: "measured 134.6–166.4 (166.4 in CI; 147–178 before the override policies came from an informer)" },
    writeTransactions: { max: 65, why: "measured 44.7–52.0" },
    rowWrites: { max: 100, why: "measured 35.6–76.0 after the idle background (member leases of three execution replicas, which varies) is taken off (114.9–129.5 with published marks and TOAST chunks)" },
    statements: { max: 240, why: "measured 168–194 (189 in CI; 189–219 before the override policies came from an informer)" },
    natsMessages: { max: 21, why: "measured 14.9–16.9" },
    outboxRows: { max: 25, why: "measured 18.4–20.4" },
    outboxBytes: { max: 44_000, why: "measured 31,100–35,100" },
  },
};
