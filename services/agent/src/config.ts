import { bool, duration, int, num, oneOf, port, str, url, type ConfigOf } from "@flotilla/config";

/**
 * flotilla-agent's settings. It runs beside one member in Pull mode and needs only outbound
 * connections: to the member's API server and to the Flotilla gateway. Timing knobs default to
 * karmada-agent's flags.
 */
export const configSchema = {
  CLUSTER_NAME: str(undefined, "name of this member's Cluster in Flotilla (--cluster-name)"),
  GATEWAY_URL: url(undefined, ["https", "http"], "Flotilla gateway URL (https://host:port)"),
  GATEWAY_TOKEN_FILE: str(undefined, "file holding the agent's bearer token (a service account token: kubectl create token); read again on every request"),
  GATEWAY_CA_FILE: str("", "PEM CA that signed the gateway's certificate (empty: the system's CAs)"),
  GATEWAY_INSECURE_SKIP_TLS_VERIFY: bool(false, "do not verify the gateway's certificate (tests only)"),
  MEMBER_KUBECONFIG: str("", "kubeconfig of the member (its current context); empty: MEMBER_API_SERVER, else in-cluster credentials"),
  MEMBER_API_SERVER: str("", "the member's API server URL when no kubeconfig is given (with MEMBER_TOKEN_FILE, MEMBER_CA_FILE)"),
  MEMBER_TOKEN_FILE: str("", "bearer token file for MEMBER_API_SERVER"),
  MEMBER_CA_FILE: str("", "PEM CA file for MEMBER_API_SERVER"),
  CLUSTER_LEASE_DURATION: duration("40s", "--cluster-lease-duration: leaseDurationSeconds of karmada-cluster/<name>"),
  CLUSTER_LEASE_RENEW_INTERVAL_FRACTION: num(0.25, { min: 0.01, max: 1 }, "--cluster-lease-renew-interval-fraction: the lease is renewed every duration × this"),
  CLUSTER_STATUS_UPDATE_FREQUENCY: duration("10s", "--cluster-status-update-frequency: time between two status reports (each carries the Ready heartbeat)"),
  CLUSTER_FAILURE_THRESHOLD: duration("30s", "--cluster-failure-threshold: how long the member must look unhealthy before Ready turns False"),
  CLUSTER_SUCCESS_THRESHOLD: duration("30s", "--cluster-success-threshold: how long the member must look healthy before Ready turns True"),
  CLUSTER_PROBE_TIMEOUT: duration("5s", "timeout of a health probe and of each status collection request"),
  CLUSTER_DISCOVERY_REFRESH: duration("1m", "API enablements are read again at most this often"),
  WORK_CONCURRENCY: int(8, { min: 1 }, "Works applied at once"),
  WORK_RESYNC_PERIOD: duration("5m", "every Work is applied again this often (0 disables)"),
  WORK_RETRY_INTERVAL: duration("10s", "a Work that could not be applied (member unreachable, write raced) is tried again after this"),
  GATEWAY_WATCH_TIMEOUT: duration("5m", "the Works watch is reopened (from its last resourceVersion) after this"),
  GATEWAY_REQUEST_TIMEOUT: duration("10s", "timeout of one gateway request"),
  MEMBER_REQUEST_TIMEOUT: duration("10s", "timeout of one member API request"),
  MEMBER_WATCH_TIMEOUT: duration("5m", "member watches end after this and the informer lists again"),
  PROXY_TUNNEL: bool(true, "keep a tunnel (a WebSocket) open to the gateway's clusters/<name>/tunnel, over which the cluster proxy reaches this member (RBAC: create on clusters/tunnel for this cluster)"),
  HOST: str("127.0.0.1", "address of the HTTP server (/healthz, /readyz, /metrics)"),
  PORT: port(8090, "HTTP port of /healthz, /readyz and /metrics (0: none)"),
  LOG_LEVEL: oneOf(["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const, "info", "pino log level"),
};

export type Config = ConfigOf<typeof configSchema>;
