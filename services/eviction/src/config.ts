import { bool, common, duration, int, port, str, type ConfigOf } from "@flotilla/config";

/** Every setting of the eviction service; names follow Karmada's flags. */
export const configSchema = {
  ...common,
  HOST: str("127.0.0.1", "address the health and metrics server listens on"),
  PORT: port(8084, "health and metrics port (/healthz, /readyz, /metrics)"),
  GRACEFUL_EVICTION_TIMEOUT: duration("10m", "how long a graceful-eviction task waits for a healthy replacement (tasks without gracePeriodSeconds)"),
  CONCURRENT_GRACEFUL_EVICTION_SYNCS: int(16, { min: 1 }, "bindings reconciled at once"),
  RESYNC_PERIOD: duration("5m", "every binding with tasks is reconciled again this often (0 = never), the backstop for lost wake-ups"),
  CLUSTER_READ_TTL: duration("250ms", "workers share one read of a task's cluster this long (a Cluster wake-up forces a fresh read)"),
  APPLICATION_FAILOVER: bool(true, "run the application failover controller (failover.application of the bindings' policies)"),
  STATEFUL_FAILOVER_INJECTION: bool(true, "feature gate StatefulFailoverInjection: application failover carries statePreservation values into the task, and the binding controller puts them on the new copy (Karmada: alpha, off)"),
  CONCURRENT_APPLICATION_FAILOVER_SYNCS: int(16, { min: 1 }, "bindings with application failover reconciled at once"),
  MOVE_BACK_SURGE_TIMEOUT: duration("10m", "move-back (policy annotation failover.flotilla.io/move-back): how long the old placement and the returning copies run side by side waiting for the returning copies to be healthy before the move-back is given up"),
  MOVE_BACK_SLOT_RECHECK: duration("5s", "move-back: how often a binding ready to move back claims a slot again while maxConcurrent other bindings of the fleet hold one (each wait is lengthened by up to a fifth at random, so the waiters do not all claim at the same instant)"),
  EVENT_DEDUPE_WINDOW: duration("1m", "a repeated warning about the same task is recorded at most once per this window"),
};

export type Config = ConfigOf<typeof configSchema>;
