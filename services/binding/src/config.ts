import { bool, duration, int, port, str, type ConfigOf } from "@flotilla/config";

/** The binding service's own settings; the common ones (DATABASE_URL, NATS_URL, LOG_LEVEL, EVENTS_*, OUTBOX_RETENTION) come with runService. */
export const configSchema = {
  HOST: str("127.0.0.1", "address the HTTP listener (/healthz, /readyz, /metrics) binds"),
  PORT: port(8081, "HTTP port"),
  CONSUMER_DURABLE: str("binding", "durable JetStream consumer name shared by the replicas of this service"),
  SKIPPED_PROPAGATING_NAMESPACES: str("kube-.*", "comma-separated regular expressions (anchored) of namespaces whose templates are never propagated (--skipped-propagating-namespaces)"),
  DETECTOR_CONCURRENCY: int(32, { min: 1 }, "templates reconciled at once by the resource detector (--concurrent-resource-template-syncs)"),
  POLICY_CONCURRENCY: int(4, { min: 1 }, "(Cluster)PropagationPolicies reconciled at once (--concurrent-propagation-policy-syncs)"),
  BINDING_CONCURRENCY: int(32, { min: 1 }, "(Cluster)ResourceBindings reconciled at once by the binding controller (--concurrent-resourcebinding-syncs)"),
  DEPENDENCIES_CONCURRENCY: int(4, { min: 1 }, "ResourceBindings reconciled at once by the dependencies distributor (propagateDeps)"),
  RESYNC_PERIOD: duration("30m", "every controller re-lists everything it owns this often (0 = off): the backstop for anything missed"),
  DIRECTLY_PURGE_REQUEUE: duration("5s", "how soon a binding is looked at again while a Directly-purged cluster still has its Work"),
  WORK_DELETING_REQUEUE: duration("5s", "how soon a binding is looked at again while a Work it needs is still being deleted"),
  POLICY_FANOUT_WAIT: duration("30s", "how long a policy change waits for the templates it touches to be reconciled before it retries"),
  POLICY_CACHE_TTL: duration("1s", "how long a list of policies read to choose the policy of an unclaimed template is reused (0 = read every time)"),
  POLICY_PREEMPTION: bool(false, "feature gate PolicyPreemption (alpha, off upstream too): a policy with `preemption: Always` takes over templates claimed by a lower-priority policy (a PropagationPolicy also from any ClusterPropagationPolicy)"),
};

export type Config = ConfigOf<typeof configSchema>;
