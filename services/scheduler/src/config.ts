import { bool, duration, int, port, str, type ConfigOf } from "@flotilla/config";
import { DefaultSchedulerName } from "@flotilla/api";
import { grpcServerSchema } from "@flotilla/auth";

/** The scheduler's settings; the ones every service has (database, NATS, log level, stream) come from runService. */
export const configSchema = {
  HOST: str("127.0.0.1", "address the HTTP (health, metrics) and gRPC (Simulate) servers listen on"),
  PORT: port(8082, "HTTP port: /healthz, /readyz, /metrics"),
  SCHEDULER_GRPC_PORT: port(9092, "gRPC port of flotilla.scheduler.v1.SchedulerService (Simulate, SimulateFailure), TLS and service account tokens only; 0 disables"),
  ...grpcServerSchema,
  SCHEDULER_NAME: str(DefaultSchedulerName, "bindings whose spec.schedulerName is this (empty counts as default-scheduler) are scheduled here"),
  PLUGINS: str("*", "enabled scheduler plugins: * for all, Name to add, -Name to disable (e.g. *,-ClusterLocality)"),
  CONCURRENCY: int(32, { min: 1 }, "bindings scheduled at once"),
  ESTIMATOR_ENABLED: bool(true, "ask the replica estimator (served by the execution service) for available replicas"),
  ESTIMATOR_GRPC_URL: str("127.0.0.1:9095", "host:port of flotilla.estimator.v1.EstimatorService (TLS; the scheduler calls it as service account flotilla-system/scheduler, with a token it signs with SERVICE_ACCOUNT_KEY_FILE)"),
  ESTIMATOR_CA_FILE: str("", "CA certificates (PEM) the estimator's serving certificate is checked against; empty: the system's roots"),
  ESTIMATOR_TIMEOUT: duration("3s", "deadline of one estimator call (Karmada's --scheduler-estimator-timeout)"),
  ESTIMATOR_CACHE_TTL: duration("1s", "one estimator answer serves every binding with the same replica requirements for this long"),
  ESTIMATOR_RETRY_AFTER: duration("10s", "after a failed estimator call, use only the clusters' resource summaries for this long"),
  UNSCHEDULABLE_RETRY: duration("5m", "an Unschedulable binding is retried after this even if no cluster changes"),
  SCHEDULE_RETRY_BASE: duration("1s", "first retry after a SchedulerError; doubles per failure"),
  SCHEDULE_RETRY_MAX: duration("5m", "longest retry interval after SchedulerErrors"),
  ASSUMED_LEDGER: bool(true, "count replicas assigned to a cluster against its capacity until the member reports them (off: Karmada's behaviour, where a burst reads the same stale capacity)"),
  ASSUMED_SETTLE_PERIOD: duration("30s", "replicas the scheduler assigned stay counted against their cluster's capacity until the member reports them running and a capacity report of the cluster taken after that arrives, or at most this long after the report; must exceed the age of the capacity reports (execution's CLUSTER_STATUS_UPDATE_FREQUENCY and ESTIMATOR_SNAPSHOT_MAX_AGE)"),
  LEADER_ELECT: bool(true, "one replica schedules at a time, the others stand by and take over within seconds when it goes (Karmada's --leader-elect); the assumed ledger is exact only in one process"),
  BINDING_UPDATE_DEBOUNCE: duration("0s", "an update of a placed binding's replicas or placement waits this long after it is first seen, so that a replica count and policy weights applied in separate calls are scheduled once (Karmada #7805); failover (evictions, clusters deleting or gone, Unschedulable retries) is never delayed; 0 disables"),
  RESYNC: duration("10m", "every binding is looked at again this often (0 disables)"),
  DIAGNOSIS_MAX_FEASIBLE: int(10, { min: 0 }, "feasible clusters listed in status.schedulingDiagnosis besides the selected ones (the rest are counted)"),
};

export type Config = ConfigOf<typeof configSchema>;
