import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { buildAdminApi } from "./admin.js";
import { SimCluster, type ClusterInfo } from "./cluster.js";
import { DEFAULT_READY_DELAY_MS, validateConfig, type ClusterConfig, type FaultSpec, type SimulatorConfig } from "./config.js";
import { buildKubeApi, type KubeApi, type KubeApiOptions } from "./kube-api.js";

export interface Simulator {
  /** The clusters, in config order (clusters added at runtime at the end). */
  readonly clusters: readonly SimCluster[];
  /** The admin API base URL, or undefined when the admin listener is off. */
  readonly adminUrl: string | undefined;
  /** The default delay before workload changes take effect (a cluster's readyDelayMs wins). */
  readonly readyDelayMs: number;
  /** The named cluster; throws if there is none. */
  cluster(name: string): SimCluster;
  info(): ClusterInfo[];
  setFault(name: string, fault: FaultSpec): Promise<ClusterInfo>;
  setReadyDelay(ms: number): void;
  addCluster(cfg: ClusterConfig): Promise<SimCluster>;
  removeCluster(name: string): Promise<void>;
  close(): Promise<void>;
}

export type StartOptions = KubeApiOptions;

class MemberSimulator implements Simulator {
  readonly clusters: SimCluster[] = [];
  adminUrl: string | undefined;
  readyDelayMs: number;
  admin: FastifyInstance | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly config: SimulatorConfig,
    private readonly kube: KubeApi,
  ) {
    this.readyDelayMs = config.defaults?.readyDelayMs ?? DEFAULT_READY_DELAY_MS;
  }

  cluster(name: string): SimCluster {
    const c = this.clusters.find((x) => x.name === name);
    if (!c) throw new Error(`no simulated cluster named ${JSON.stringify(name)}`);
    return c;
  }

  info(): ClusterInfo[] {
    return this.clusters.map((c) => c.info());
  }

  async setFault(name: string, fault: FaultSpec): Promise<ClusterInfo> {
    const c = this.cluster(name);
    await c.setFault(fault);
    return c.info();
  }

  setReadyDelay(ms: number): void {
    this.readyDelayMs = ms;
  }

  async addCluster(cfg: ClusterConfig): Promise<SimCluster> {
    validateConfig({ clusters: [cfg] });
    if (this.clusters.some((c) => c.name === cfg.name)) throw new Error(`cluster ${cfg.name} already exists`);
    const c = new SimCluster(cfg, {
      handler: this.kube.handler,
      defaultReadyDelayMs: () => this.readyDelayMs,
      ...(this.config.defaults ? { defaults: this.config.defaults } : {}),
    });
    this.clusters.push(c);
    try {
      await c.start();
    } catch (e) {
      this.clusters.splice(this.clusters.indexOf(c), 1);
      await c.close();
      throw e;
    }
    return c;
  }

  async removeCluster(name: string): Promise<void> {
    const c = this.cluster(name);
    this.clusters.splice(this.clusters.indexOf(c), 1);
    await c.close();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.admin?.close();
      await Promise.all(this.clusters.map((c) => c.close()));
      await this.kube.close();
    })();
    return this.closing;
  }
}

/**
 * Starts the simulated clusters (each on its own listener) and the admin API.
 * Rejects, with everything already started closed again, when a config problem or a busy port stops it.
 */
export async function startSimulator(config: SimulatorConfig, opts: StartOptions = {}): Promise<Simulator> {
  validateConfig(config);
  const kube = await buildKubeApi(opts);
  const sim = new MemberSimulator(config, kube);
  try {
    const results = await Promise.allSettled(config.clusters.map((c) => sim.addCluster(c)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
    // Keep config order whatever order the listeners came up in.
    sim.clusters.sort((a, b) => config.clusters.findIndex((c) => c.name === a.name) - config.clusters.findIndex((c) => c.name === b.name));
    if (config.admin !== false) {
      const admin = buildAdminApi(sim);
      sim.admin = admin;
      await admin.listen({ host: config.admin?.host ?? "127.0.0.1", port: config.admin?.port ?? 0 });
      const a = admin.server.address() as AddressInfo;
      const host = a.family === "IPv6" ? `[${a.address}]` : a.address;
      sim.adminUrl = `http://${host}:${a.port}`;
    }
  } catch (e) {
    await sim.close();
    throw e;
  }
  return sim;
}
