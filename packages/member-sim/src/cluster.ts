import { rfc3339 } from "@flotilla/api";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ApiIndex, NODE, POD, resolveApis, groupVersion, type ApiResource } from "./api-catalog.js";
import { summarize } from "./capacity.js";
import {
  DEFAULT_KUBERNETES_VERSION,
  DEFAULT_SLOW_LATENCY_MS,
  expandNodes,
  type ClusterConfig,
  type FaultSpec,
  type NodeConfig,
  type ResolvedNode,
  type SimulatorConfig,
} from "./config.js";
import { formatBytes, formatCpu } from "./quantity.js";
import { ObjectStore, type KObject } from "./store.js";
import { nodeCapacity, podUsage, WorkloadController } from "./workload.js";

export type RequestHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

const CLUSTER = Symbol("flotilla.member-sim.cluster");

/** The simulated cluster a request arrived at. */
export function clusterOf(req: http.IncomingMessage): SimCluster | undefined {
  return (req as http.IncomingMessage & { [CLUSTER]?: SimCluster })[CLUSTER];
}

/** What the admin API and `sim.info()` report about a cluster. */
export interface ClusterInfo {
  name: string;
  /** The API base URL, e.g. http://127.0.0.1:7101. */
  server: string;
  token: string;
  region?: string;
  zone?: string;
  provider?: string;
  labels: Record<string, string>;
  fault: FaultSpec;
  readyDelayMs: number;
  kubernetesVersion: string;
  /** Group versions served ("v1", "apps/v1", …). */
  apis: string[];
  nodes: number;
  objects: number;
}

/** Karmada's Cluster.status.resourceSummary, as quantities. */
export interface ResourceSummary {
  allocatable: { cpu: string; memory: string; pods: string };
  allocated: { cpu: string; memory: string; pods: string };
  allocating: { cpu: string; memory: string; pods: string };
}

export interface ClusterEnv {
  handler: RequestHandler;
  defaultReadyDelayMs: () => number;
  defaults?: SimulatorConfig["defaults"];
}

function nodeObject(n: ResolvedNode, c: SimCluster): KObject {
  const quantities = { cpu: String(n.cpu), memory: String(n.memory), pods: String(n.pods), "ephemeral-storage": "100Gi" };
  const labels: Record<string, string> = {
    "kubernetes.io/hostname": n.name,
    "kubernetes.io/os": "linux",
    "kubernetes.io/arch": "amd64",
    ...(c.region ? { "topology.kubernetes.io/region": c.region } : {}),
    ...(c.zone ? { "topology.kubernetes.io/zone": c.zone } : {}),
    ...(n.labels ?? {}),
  };
  const now = rfc3339(new Date());
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: n.name, labels } as KObject["metadata"],
    spec: { ...(c.provider ? { providerID: `${c.provider}://${c.name}/${n.name}` } : {}), ...(n.unschedulable ? { unschedulable: true } : {}) },
    status: {
      capacity: quantities,
      allocatable: quantities,
      conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status", lastHeartbeatTime: now, lastTransitionTime: now }],
      addresses: [
        { type: "InternalIP", address: "10.0.0.1" },
        { type: "Hostname", address: n.name },
      ],
      nodeInfo: { kubeletVersion: c.kubernetesVersion, containerRuntimeVersion: "containerd://1.7.0", operatingSystem: "linux", architecture: "amd64" },
    },
  };
}

/**
 * One simulated member cluster: its objects, its workload controller, its fault switch and its
 * own listener (so "unreachable" is a closed port that refuses connections).
 */
export class SimCluster {
  readonly name: string;
  readonly token: string;
  readonly host: string;
  readonly region?: string;
  readonly zone?: string;
  readonly provider?: string;
  readonly labels: Record<string, string>;
  readonly kubernetesVersion: string;
  readonly apis: ApiIndex;
  readonly store = new ObjectStore();
  readonly controller: WorkloadController;
  /** Closers of the open watch streams, ended when the listener closes. */
  readonly watches = new Set<() => void>();

  private portNumber: number;
  private faultSpec: FaultSpec = { mode: "healthy" };
  private readyDelayOverride: number | undefined;
  private server: http.Server | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    cfg: ClusterConfig,
    private readonly env: ClusterEnv,
  ) {
    const d = env.defaults ?? {};
    this.name = cfg.name;
    this.token = cfg.token ?? `${cfg.name}-token`;
    this.host = cfg.host ?? d.host ?? "127.0.0.1";
    this.portNumber = cfg.port ?? 0;
    if (cfg.region !== undefined) this.region = cfg.region;
    if (cfg.zone !== undefined) this.zone = cfg.zone;
    if (cfg.provider !== undefined) this.provider = cfg.provider;
    this.labels = { ...(cfg.labels ?? {}) };
    this.kubernetesVersion = cfg.kubernetesVersion ?? d.kubernetesVersion ?? DEFAULT_KUBERNETES_VERSION;
    this.apis = new ApiIndex(resolveApis(cfg.apis ?? d.apis));
    this.readyDelayOverride = cfg.readyDelayMs;
    this.controller = new WorkloadController(this.store, { readyDelayMs: () => this.readyDelayMs });
    for (const ns of ["default", "kube-system", "kube-public", "kube-node-lease"]) this.store.ensureNamespace(ns);
    for (const n of expandNodes(cfg.nodes ?? d.nodes)) this.store.create(NODE, "", nodeObject(n, this), { internal: true });
    if (cfg.fault) this.faultSpec = normalizeFault(cfg.fault);
  }

  get port(): number {
    return this.portNumber;
  }

  /** The API base URL (no trailing slash). */
  get url(): string {
    const h = this.host.includes(":") ? `[${this.host}]` : this.host;
    return `http://${h}:${this.portNumber}`;
  }

  get fault(): FaultSpec {
    return { ...this.faultSpec };
  }

  get readyDelayMs(): number {
    return this.readyDelayOverride ?? this.env.defaultReadyDelayMs();
  }

  /** Sets this cluster's workload delay; undefined goes back to the simulator's default. */
  setReadyDelay(ms: number | undefined): void {
    this.readyDelayOverride = ms;
  }

  /** Opens the listener (unless the cluster starts unreachable; then it only reserves a port). */
  async start(): Promise<void> {
    await this.serialize(async () => {
      await this.listen();
      if (this.faultSpec.mode === "unreachable") await this.unlisten();
    });
  }

  /**
   * Switches the fault mode. "unreachable" closes the listener and every open connection;
   * leaving it reopens the listener on the same port. Objects are kept either way.
   */
  async setFault(f: FaultSpec): Promise<void> {
    const next = normalizeFault(f);
    await this.serialize(async () => {
      if (this.closed) return;
      const was = this.faultSpec.mode;
      this.faultSpec = next;
      if (next.mode === "unreachable" && was !== "unreachable") await this.unlisten();
      if (next.mode !== "unreachable" && !this.server) await this.listen();
    });
  }

  /** Stops the listener and the controller for good. */
  async close(): Promise<void> {
    await this.serialize(async () => {
      this.closed = true;
      this.controller.stop();
      await this.unlisten();
    });
  }

  /** Replaces the nodes (same shape as the config's `nodes`); pods on removed nodes go back to Pending. */
  setNodes(nodes: NodeConfig[]): void {
    const want = expandNodes(nodes);
    const names = new Set(want.map((n) => n.name));
    for (const old of this.store.list(NODE)) if (!names.has(old.metadata.name)) this.store.delete(NODE, "", old.metadata.name);
    for (const n of want) {
      const obj = nodeObject(n, this);
      const cur = this.store.get(NODE, "", n.name);
      if (cur) this.store.replace(NODE, "", n.name, { ...obj, metadata: cur.metadata }, { internal: true });
      else this.store.create(NODE, "", obj, { internal: true });
    }
    this.controller.nodesChanged();
  }

  /** Runs the workload controller's waiting work now, skipping the delay. */
  flush(): void {
    this.controller.flush();
  }

  info(): ClusterInfo {
    return {
      name: this.name,
      server: this.url,
      token: this.token,
      ...(this.region !== undefined ? { region: this.region } : {}),
      ...(this.zone !== undefined ? { zone: this.zone } : {}),
      ...(this.provider !== undefined ? { provider: this.provider } : {}),
      labels: { ...this.labels },
      fault: this.fault,
      readyDelayMs: this.readyDelayMs,
      kubernetesVersion: this.kubernetesVersion,
      apis: this.apis.groupVersions(),
      nodes: this.store.list(NODE).length,
      objects: this.store.count(),
    };
  }

  /** Allocatable from the nodes, allocated from bound non-terminal pods, allocating from unbound pods. */
  summary(): ResourceSummary {
    const s = summarize(this.store.list(NODE).map(nodeCapacity), this.store.list(POD).map(podUsage));
    const q = (r: { cpuMillis: number; memoryBytes: number; pods: number }) => ({ cpu: formatCpu(r.cpuMillis), memory: formatBytes(r.memoryBytes), pods: String(r.pods) });
    return { allocatable: q(s.allocatable), allocated: q(s.allocated), allocating: q(s.allocating) };
  }

  // In-process access for tests. Results are copies.

  resource(apiVersion: string, kind: string): ApiResource {
    const r = this.apis.byKind(apiVersion, kind);
    if (!r) throw new Error(`cluster ${this.name} does not serve ${apiVersion} ${kind}`);
    return r;
  }

  get(apiVersion: string, kind: string, name: string, namespace = "default"): KObject | undefined {
    const r = this.resource(apiVersion, kind);
    const o = this.store.get(r, r.namespaced ? namespace : "", name);
    return o && structuredClone(o);
  }

  /** Objects of one kind, in one namespace or (namespace undefined) in all. */
  list(apiVersion: string, kind: string, namespace?: string): KObject[] {
    return structuredClone(this.store.list(this.resource(apiVersion, kind), namespace));
  }

  /** Every object, optionally of one kind or namespace. */
  objects(filter: { apiVersion?: string; kind?: string; namespace?: string } = {}): KObject[] {
    const out: KObject[] = [];
    for (const { resource, object } of this.store.all()) {
      if (filter.apiVersion && groupVersion(resource) !== filter.apiVersion) continue;
      if (filter.kind && resource.kind !== filter.kind) continue;
      if (filter.namespace !== undefined && (object.metadata.namespace ?? "") !== filter.namespace) continue;
      out.push(object);
    }
    return structuredClone(out);
  }

  /** Creates an object as a client would (namespace from metadata, default "default"). */
  create(obj: { apiVersion: string; kind: string; metadata: { name?: string; namespace?: string; [k: string]: unknown }; [k: string]: unknown }): KObject {
    const r = this.resource(obj.apiVersion, obj.kind);
    return structuredClone(this.store.create(r, r.namespaced ? (obj.metadata.namespace ?? "default") : "", obj));
  }

  /** Merge-patches an object as a client would. */
  patch(apiVersion: string, kind: string, name: string, patch: unknown, namespace = "default"): KObject {
    const r = this.resource(apiVersion, kind);
    return structuredClone(this.store.patch(r, r.namespaced ? namespace : "", name, patch));
  }

  delete(apiVersion: string, kind: string, name: string, namespace = "default"): void {
    const r = this.resource(apiVersion, kind);
    this.store.delete(r, r.namespaced ? namespace : "", name);
  }

  // ---------------------------------------------------------------------------------------------

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async listen(): Promise<void> {
    if (this.server) return;
    const server = http.createServer((req, res) => {
      (req as http.IncomingMessage & { [CLUSTER]?: SimCluster })[CLUSTER] = this;
      this.env.handler(req, res);
    });
    server.keepAliveTimeout = 5000;
    await new Promise<void>((resolve, reject) => {
      const onError = (e: Error) => {
        server.off("listening", onListening);
        reject(new Error(`cluster ${this.name}: cannot listen on ${this.host}:${this.portNumber}: ${e.message}`, { cause: e }));
      };
      const onListening = () => {
        server.off("error", onError);
        resolve();
      };
      server.once("error", onError);
      server.once("listening", onListening);
      server.listen(this.portNumber, this.host);
    });
    this.portNumber = (server.address() as AddressInfo).port;
    this.server = server;
  }

  private async unlisten(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const end of [...this.watches]) end();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
    // Give in-process clients (tests) a moment to see their pooled connections close, so their
    // next request dials anew and is refused rather than failing on a dead socket.
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function normalizeFault(f: FaultSpec): FaultSpec {
  if (f.mode === "slow") return { mode: "slow", latencyMs: f.latencyMs ?? DEFAULT_SLOW_LATENCY_MS };
  return { mode: f.mode };
}
