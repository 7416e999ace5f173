import type { AppSettings } from "./app.js";
import type { Config } from "./config.js";

/** The settings buildApp takes, from the service's configuration. */
export function settingsFrom(cfg: Config): AppSettings {
  return {
    schedulerName: cfg.SCHEDULER_NAME,
    plugins: cfg.PLUGINS,
    concurrency: cfg.CONCURRENCY,
    maxFeasible: cfg.DIAGNOSIS_MAX_FEASIBLE,
    unschedulableRetryMs: cfg.UNSCHEDULABLE_RETRY,
    retryBaseMs: cfg.SCHEDULE_RETRY_BASE,
    retryMaxMs: cfg.SCHEDULE_RETRY_MAX,
    maxConflicts: 10,
    bindingUpdateDebounceMs: cfg.BINDING_UPDATE_DEBOUNCE,
    resyncMs: cfg.RESYNC,
    assumedLedger: cfg.ASSUMED_LEDGER,
    assumedSettleMs: cfg.ASSUMED_SETTLE_PERIOD,
    leaderElect: cfg.LEADER_ELECT,
    estimatorDeadlineMs: cfg.ESTIMATOR_TIMEOUT,
    estimatorCacheTtlMs: cfg.ESTIMATOR_CACHE_TTL,
    estimatorRetryAfterMs: cfg.ESTIMATOR_RETRY_AFTER,
  };
}
