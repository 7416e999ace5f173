import { common, duration, int, port, str, type ConfigOf } from "@flotilla/config";

/** Every setting of the eviction service; names follow Karmada's flags. */
export const configSchema = {
  ...common,
  HOST: str("127.0.0.1", "address the health and metrics server listens on"),
  PORT: port(8084, "health and metrics port (/healthz, /readyz, /metrics)"),
  GRACEFUL_EVICTION_TIMEOUT: duration("10m", "how long a graceful-eviction task waits for a healthy replacement (tasks without gracePeriodSeconds)"),
  CONCURRENT_GRACEFUL_EVICTION_SYNCS: int(16, { min: 1 }, "bindings reconciled at once"),
  RESYNC_PERIOD: duration("5m", "every binding with tasks is reconciled again this often (0 = never), the backstop for lost wake-ups"),
  CLUSTER_READ_TTL: duration("250ms", "workers share one read of a task's cluster this long (a Cluster wake-up forces a fresh read)"),
  EVENT_DEDUPE_WINDOW: duration("1m", "a repeated warning about the same task is recorded at most once per this window"),
};

export type Config = ConfigOf<typeof configSchema>;
