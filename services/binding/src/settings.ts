import { defaultsOf } from "@flotilla/config";
import { configSchema, type Config } from "./config.js";

/** The settings `buildApp` needs, in the units the controllers use. */
export interface Settings {
  skippedNamespaces: string[];
  detectorConcurrency: number;
  policyConcurrency: number;
  bindingConcurrency: number;
  dependenciesConcurrency: number;
  resyncMs: number;
  directlyPurgeRequeueMs: number;
  workDeletingRequeueMs: number;
  policyFanoutWaitMs: number;
  policyCacheTtlMs: number;
  /** Feature gate PolicyPreemption. */
  policyPreemption: boolean;
  durable: string;
}

export const DEFAULT_SETTINGS: Settings = settingsFrom(defaultsOf(configSchema));

export function settingsFrom(
  c: Pick<
    Config,
    | "SKIPPED_PROPAGATING_NAMESPACES"
    | "DETECTOR_CONCURRENCY"
    | "POLICY_CONCURRENCY"
    | "BINDING_CONCURRENCY"
    | "DEPENDENCIES_CONCURRENCY"
    | "RESYNC_PERIOD"
    | "DIRECTLY_PURGE_REQUEUE"
    | "WORK_DELETING_REQUEUE"
    | "POLICY_FANOUT_WAIT"
    | "POLICY_CACHE_TTL"
    | "POLICY_PREEMPTION"
    | "CONSUMER_DURABLE"
  >,
): Settings {
  return {
    skippedNamespaces: c.SKIPPED_PROPAGATING_NAMESPACES.split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    detectorConcurrency: c.DETECTOR_CONCURRENCY,
    policyConcurrency: c.POLICY_CONCURRENCY,
    bindingConcurrency: c.BINDING_CONCURRENCY,
    dependenciesConcurrency: c.DEPENDENCIES_CONCURRENCY,
    resyncMs: c.RESYNC_PERIOD,
    directlyPurgeRequeueMs: c.DIRECTLY_PURGE_REQUEUE,
    workDeletingRequeueMs: c.WORK_DELETING_REQUEUE,
    policyFanoutWaitMs: c.POLICY_FANOUT_WAIT,
    policyCacheTtlMs: c.POLICY_CACHE_TTL,
    policyPreemption: c.POLICY_PREEMPTION,
    durable: c.CONSUMER_DURABLE,
  };
}
