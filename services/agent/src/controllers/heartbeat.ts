import { rfc3339, setCondition, type Cluster, type KubeObject } from "@flotilla/api";
import type { MemberClient } from "@flotilla/kube";
import type { Logger } from "@flotilla/log";
import { collectClusterStatus, generateReadyCondition, type ReadyThresholds } from "@flotilla/member-apply";
import type { GatewayClient } from "../gateway-client.js";
import { LEASE_NAMESPACE, renewedLease } from "../logic/lease.js";
import { registration } from "../logic/registration.js";

export const CLUSTERS = "/apis/cluster.karmada.io/v1alpha1/clusters";
export const leasePath = (ns: string, name?: string) => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases${name ? `/${encodeURIComponent(name)}` : ""}`;

export interface HeartbeatDeps {
  gateway: GatewayClient;
  member: MemberClient;
  cluster: string;
  log: Logger;
  thresholds: ReadyThresholds;
  leaseDurationSeconds: number;
  probeTimeoutMs: number;
  discoveryRefreshMs: number;
  now?: () => Date;
}

/**
 * The agent's side of the cluster controller: registers the Cluster in Pull mode, renews its
 * Lease, and reports the member's status (Ready with its heartbeat, version, API enablements,
 * node and resource summaries, and the nodes per grade of the Cluster's resource models) through
 * the gateway's clusters/status.
 */
export class Heartbeat {
  private readonly now: () => Date;

  constructor(private readonly d: HeartbeatDeps) {
    this.now = d.now ?? (() => new Date());
  }

  /** Creates the Cluster (syncMode Pull), or sets the owned fields on the one there. Idempotent. */
  async register(): Promise<"created" | "updated" | "unchanged"> {
    const path = `${CLUSTERS}/${encodeURIComponent(this.d.cluster)}`;
    const existing = await this.d.gateway.get<Cluster>(path);
    const r = registration(this.d.cluster, existing);
    if (r.action === "none") return "unchanged";
    if (r.action === "create") await this.d.gateway.request("POST", CLUSTERS, r.cluster);
    else await this.d.gateway.request("PUT", path, r.cluster);
    this.d.log.info({ cluster: this.d.cluster, action: r.action }, "cluster registered in Pull mode");
    return r.action === "create" ? "created" : "updated";
  }

  /** Renews karmada-cluster/<cluster> (creates it the first time). */
  async renewLease(): Promise<KubeObject> {
    const path = leasePath(LEASE_NAMESPACE, this.d.cluster);
    const existing = await this.d.gateway.get(path);
    const lease = renewedLease(this.d.cluster, existing, this.now(), this.d.leaseDurationSeconds);
    return existing ? this.d.gateway.request("PUT", path, lease) : this.d.gateway.request("POST", leasePath(LEASE_NAMESPACE), lease);
  }

  /** One status report: probe, smooth with the thresholds, collect when Ready, write with a fresh heartbeat. */
  async report(signal: AbortSignal): Promise<Cluster> {
    const path = `${CLUSTERS}/${encodeURIComponent(this.d.cluster)}`;
    const cluster = await this.d.gateway.get<Cluster>(path, signal);
    if (!cluster) throw new Error(`cluster ${this.d.cluster} does not exist`);
    const health = await this.d.member.health({ timeoutMs: this.d.probeTimeoutMs, signal });
    const observed = generateReadyCondition(health.online, health.healthy);
    const t = this.now();
    const ready = this.d.thresholds.adjust(this.d.cluster, cluster.status?.conditions, observed, t.getTime());
    let status = structuredClone(cluster.status ?? {});
    if (health.online && health.healthy && ready.status === "True") {
      status = (
        await collectClusterStatus(this.d.member, status, { timeoutMs: this.d.probeTimeoutMs, signal, now: t, discoveryRefreshMs: this.d.discoveryRefreshMs, resourceModels: cluster.spec?.resourceModels })
      ).status;
    }
    // the heartbeat the taint-manager's health monitor watches: stamped on every report
    status.conditions = setCondition(status.conditions, { type: "Ready", status: ready.status, reason: ready.reason, message: ready.message, lastHeartbeatTime: rfc3339(t) }, t);
    return this.d.gateway.request<Cluster>("PUT", `${path}/status`, { ...cluster, status }, signal);
  }
}
