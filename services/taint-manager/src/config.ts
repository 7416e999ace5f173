import { bool, common, duration, int, num, oneOf, port, str, type ConfigOf } from "@flotilla/config";

/** Every setting of the taint-manager; names follow Karmada's flags, defaults Karmada v1.3–v1.5's unless noted. */
export const configSchema = {
  ...common,
  HOST: str("127.0.0.1", "address the health and metrics server listens on"),
  PORT: port(8083, "health and metrics port (/healthz, /readyz, /metrics)"),

  FAILOVER: bool(true, "feature gate Failover: NoExecute taints after FAILOVER_EVICTION_TIMEOUT, and evictions by the taint manager"),
  GRACEFUL_EVICTION: bool(true, "feature gate GracefulEviction: evict into a graceful-eviction task (false: remove the cluster from spec.clusters at once)"),
  FAILOVER_EVICTION_TIMEOUT: duration("5m", "how long a cluster stays not Ready before it gets the not-ready/unreachable NoExecute taint"),
  ENABLE_CLUSTER_NO_EXECUTE_TAINTS: bool(
    true,
    "the cluster controller adds the not-ready/unreachable NoExecute taints after FAILOVER_EVICTION_TIMEOUT (Karmada before v1.14); false: as Karmada v1.14+, they come only from ClusterTaintPolicies or users, and the taint manager still evicts on them",
  ),
  CLUSTER_MONITOR_GRACE_PERIOD: duration("40s", "a Ready condition whose lastHeartbeatTime is older than this becomes Unknown"),
  CLUSTER_STARTUP_GRACE_PERIOD: duration("60s", "a new cluster without any Ready condition becomes Unknown after this"),
  NO_EXECUTE_TAINT_EVICTION_PURGE_MODE: oneOf(["Gracefully", "Directly"] as const, "Gracefully", "purge mode of taint evictions for bindings without failover.cluster"),

  RESOURCE_EVICTION_RATE: num(1000, { min: 0 }, "bindings evicted per second across all taint-manager replicas (Karmada: 0.5)"),
  SECONDARY_RESOURCE_EVICTION_RATE: num(1, { min: 0 }, "bindings evicted per second across all replicas once more than UNHEALTHY_CLUSTER_THRESHOLD of the clusters are unhealthy (0 stops evictions)"),
  UNHEALTHY_CLUSTER_THRESHOLD: num(0.55, { min: 0, max: 1 }, "share of not-Ready clusters above which evictions slow to the secondary rate"),
  LIMIT_LEASE_RENEW_INTERVAL: duration("2s", "how often each replica renews its lease on the eviction rate (one statement) while it evicts, and so how soon the replicas' shares follow a change of demand"),
  FLEET_HEALTH_REFRESH: duration("1s", "how often the share of unhealthy clusters is recounted while evicting"),
  CLUSTER_READ_TTL: duration("250ms", "eviction workers share a read of a cluster this long (0 = every eviction reads it)"),

  CLUSTER_TAINT_EVICTION_RETRY_FREQUENCY: duration("10s", "how often the bindings on a cluster with NoExecute taints are looked at again"),
  CLUSTER_CLEANUP_RETRY_FREQUENCY: duration("10s", "how often a deleting cluster is checked for bindings and Works still on it"),
  CONCURRENT_CLUSTER_SYNCS: int(5, { min: 1 }, "clusters reconciled at once (cluster controller and taint manager each)"),
  CONCURRENT_BINDING_EVICTION_SYNCS: int(32, { min: 1 }, "binding evictions written at once"),
  RESYNC_PERIOD: duration("5m", "every cluster is reconciled again this often (0 = never), the backstop for lost wake-ups"),
};

export type Config = ConfigOf<typeof configSchema>;
