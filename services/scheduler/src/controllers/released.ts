import type { Cluster } from "@flotilla/api";
import { reportTimesOf, type AssumedLedger } from "../logic/assumed.js";
import type { BindingTracker } from "./tracker.js";

/** How often the ledger is looked at for load it let go of. */
export const RELEASE_CHECK_MS = 250;

export interface RetryOnReleaseDeps {
  ledger: AssumedLedger;
  clusters: { snapshot(): readonly Cluster[] };
  tracker: BindingTracker;
  /** Queues a binding key (the running controller's `add`). */
  add(key: string): void;
  intervalMs?: number;
}

/**
 * Retries the bindings parked as Unschedulable as soon as the assumed ledger lets go of load on
 * any cluster: a reported replica settled (a capacity report that counts it arrived, or its
 * settle period ended), an assignment shrank or moved, a binding went. None of these is a change
 * of a Cluster, so nothing else would wake those bindings before their UNSCHEDULABLE_RETRY timer.
 * Only the parked bindings are queued, at most once per check; the rest of the fleet is not
 * touched. Runs while this replica schedules.
 */
export function retryOnRelease(d: RetryOnReleaseDeps): { start(): void; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let seen = d.ledger.releases;
  const check = () => {
    const snapshot = d.clusters.snapshot();
    const times = reportTimesOf(snapshot);
    d.ledger.load(Date.now(), (c) => times.get(c));
    if (d.ledger.releases === seen) return;
    seen = d.ledger.releases;
    for (const key of d.tracker.drainParked()) d.add(key);
  };
  return {
    start() {
      seen = d.ledger.releases;
      timer ??= setInterval(check, d.intervalMs ?? RELEASE_CHECK_MS);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
