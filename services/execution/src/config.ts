import { bool, duration, int, oneOf, port, str, type ConfigOf } from "@flotilla/config";
import { grpcServerSchema } from "@flotilla/auth";

/**
 * The execution service's own settings (runService adds the shared ones: DATABASE_URL, NATS_URL,
 * LOG_LEVEL, EVENTS_STREAM, EVENTS_PREFIX, OUTBOX_RETENTION). Timing knobs default to Karmada's
 * values and are named after its flags.
 */
export const configSchema = {
  HOST: str("127.0.0.1", "address the HTTP (health, metrics) and gRPC (estimator) servers listen on"),
  PORT: port(8085, "HTTP port of /healthz, /readyz and /metrics"),
  ESTIMATOR_PORT: port(9095, "gRPC port of the replica estimator, TLS and service account tokens only (0 disables it)"),
  ...grpcServerSchema,
  CLUSTER_STATUS_UPDATE_FREQUENCY: duration("10s", "--cluster-status-update-frequency: time between two probes of a member"),
  CLUSTER_FAILURE_THRESHOLD: duration("30s", "--cluster-failure-threshold: how long a member must look unhealthy before Ready turns False"),
  CLUSTER_SUCCESS_THRESHOLD: duration("30s", "--cluster-success-threshold: how long a member must look healthy before Ready turns True"),
  CLUSTER_PROBE_TIMEOUT: duration("5s", "timeout of a health probe and of each status collection request"),
  CLUSTER_DISCOVERY_REFRESH: duration("1m", "API enablements (discovery: one request per group version) are read again at most this often; version, nodes and pods every probe"),
  CLUSTER_STATUS_CONCURRENCY: int(100, { min: 1 }, "members probed at once"),
  WORK_CONCURRENCY: int(64, { min: 1 }, "Works reconciled at once"),
  WORK_RESYNC_PERIOD: duration("10m", "every Work is reconciled again this often (0 disables)"),
  WORK_RETRY_INTERVAL: duration("10s", "a Work whose member is not Ready, unreachable or failing is tried again after this (and at once when it turns Ready)"),
  CLUSTER_CACHE_REFRESH: duration("2s", "how often this replica re-reads the Secrets its Clusters name (the Clusters themselves are followed by a watch)"),
  MEMBER_REQUEST_TIMEOUT: duration("10s", "timeout of one member API request"),
  MEMBER_MAX_SOCKETS: int(64, { min: 1 }, "keep-alive connections per member"),
  MEMBER_WATCH_TIMEOUT: duration("5m", "member watches end after this and the informer lists again"),
  ESTIMATOR_TIMEOUT: duration("3s", "upper bound of one estimator call when the caller's deadline is later"),
  MEMBER_ALLOW_HTTP: oneOf(["none", "loopback", "any"] as const, "none", "plain-http spec.apiEndpoint allowed (the member's token then travels in clear): none, loopback (a local simulator) or any; https is always allowed, link-local addresses never"),
  MEMBER_SHARDING: bool(true, "each member cluster is probed, watched and applied by one execution replica at a time, by lease, so a scaled Deployment shares the member load without copying a flag (false: every replica works on every member)"),
  MEMBER_LEASE_DURATION: duration("10s", "a replica that stops renewing (dead, or cut off from Postgres) has its members taken over after this; it stops working on them MEMBER_LEASE_RENEW_INTERVAL earlier"),
  MEMBER_LEASE_RENEW_INTERVAL: duration("2s", "time between two lease rounds of a replica (heartbeat, rebalance, renewal); at most a third of MEMBER_LEASE_DURATION is used"),
  REPLICA_NAME: str("", "this replica's name among the execution replicas (unique; kept across its restarts); empty: <host name>-<PORT>"),
  ESTIMATOR_SNAPSHOT_MAX_AGE: duration("15s", "a member's nodes and pods (refreshed by every status probe) older than this are listed again before an estimate"),
};

export type Config = ConfigOf<typeof configSchema>;
