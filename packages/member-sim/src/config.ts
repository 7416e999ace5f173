import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { resolveApis, type ApiSpec } from "./api-catalog.js";
import { bytesOf, cpuMillis } from "./quantity.js";

export type FaultMode = "healthy" | "not-ready" | "unreachable" | "slow";
export const FAULT_MODES: readonly FaultMode[] = ["healthy", "not-ready", "unreachable", "slow"];

/** A cluster's fault switch. `latencyMs` is added to every request in "slow" mode (default 1000). */
export interface FaultSpec {
  mode: FaultMode;
  latencyMs?: number;
}

export interface NodeConfig {
  /** Default `node-<n>`. */
  name?: string;
  /** Allocatable CPU, e.g. "8" or "3500m". Default "8". */
  cpu?: string | number;
  /** Allocatable memory, e.g. "32Gi". Default "32Gi". */
  memory?: string | number;
  /** Pod slots. Default 110. */
  pods?: number;
  labels?: Record<string, string>;
  /** A cordoned node takes no new pods. */
  unschedulable?: boolean;
  /** Stamps out this many identical nodes (named `<name or node>-<i>`). Default 1. */
  count?: number;
}

export interface ClusterConfig {
  name: string;
  /** Listen address. Default 127.0.0.1. */
  host?: string;
  /** 0 or absent: any free port (kept across unreachable/healthy switches). */
  port?: number;
  /** Bearer token every request must carry. Default `<name>-token`. */
  token?: string;
  region?: string;
  zone?: string;
  provider?: string;
  labels?: Record<string, string>;
  /** Default: 3 nodes of 8 cpu, 32Gi, 110 pods. */
  nodes?: NodeConfig[];
  /** "default" (or absent), or a list; see README. */
  apis?: ApiSpec | ApiSpec[];
  /** Overrides defaults.readyDelayMs for this cluster. */
  readyDelayMs?: number;
  /** What /version reports. Default v1.29.0. */
  kubernetesVersion?: string;
  /** The fault mode the cluster starts in. Default healthy. */
  fault?: FaultSpec;
}

export interface AdminConfig {
  host?: string;
  /** 0: any free port. */
  port?: number;
}

export interface SimulatorConfig {
  /** The admin listener; `false` turns it off. Default 127.0.0.1 on a free port. */
  admin?: AdminConfig | false;
  defaults?: {
    /** Delay before workload changes take effect. Default 1000. */
    readyDelayMs?: number;
    host?: string;
    nodes?: NodeConfig[];
    apis?: ApiSpec | ApiSpec[];
    kubernetesVersion?: string;
  };
  clusters: ClusterConfig[];
}

export const DEFAULT_READY_DELAY_MS = 1000;
export const DEFAULT_SLOW_LATENCY_MS = 1000;
export const DEFAULT_KUBERNETES_VERSION = "v1.29.0";
export const DEFAULT_NODES: readonly NodeConfig[] = [{ name: "node", cpu: "8", memory: "32Gi", pods: 110, count: 3 }];

/** Every problem found in a config, reported at once. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: string[]) {
    super(`invalid simulator config:\n  - ${problems.join("\n  - ")}`);
  }
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isPort = (v: unknown) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 65535;
const isMs = (v: unknown) => typeof v === "number" && Number.isFinite(v) && v >= 0;

function checkStringMap(v: unknown, where: string, problems: string[]): void {
  if (v === undefined) return;
  if (!isRecord(v) || Object.values(v).some((x) => typeof x !== "string")) problems.push(`${where}: must be a map of strings`);
}

export function checkFault(v: unknown, where: string, problems: string[]): void {
  if (!isRecord(v)) {
    problems.push(`${where}: must be an object like {"mode":"slow","latencyMs":500}`);
    return;
  }
  if (!FAULT_MODES.includes(v.mode as FaultMode)) problems.push(`${where}.mode: must be one of ${FAULT_MODES.join(", ")} (got ${JSON.stringify(v.mode)})`);
  if (v.latencyMs !== undefined && !isMs(v.latencyMs)) problems.push(`${where}.latencyMs: must be a number >= 0`);
}

function checkNodes(v: unknown, where: string, problems: string[]): void {
  if (v === undefined) return;
  if (!Array.isArray(v)) {
    problems.push(`${where}: must be a list`);
    return;
  }
  v.forEach((n, i) => {
    const w = `${where}[${i}]`;
    if (!isRecord(n)) return void problems.push(`${w}: must be an object`);
    if (n.name !== undefined && (typeof n.name !== "string" || !DNS_LABEL.test(n.name))) problems.push(`${w}.name: must be a DNS label`);
    for (const [field, parse] of [["cpu", cpuMillis], ["memory", bytesOf]] as const) {
      if (n[field] === undefined) continue;
      try {
        if (parse(n[field] as string) < 0) throw new Error("negative");
      } catch {
        problems.push(`${w}.${field}: not a valid quantity: ${JSON.stringify(n[field])}`);
      }
    }
    if (n.pods !== undefined && !(Number.isInteger(n.pods) && (n.pods as number) >= 0)) problems.push(`${w}.pods: must be an integer >= 0`);
    if (n.count !== undefined && !(Number.isInteger(n.count) && (n.count as number) >= 1)) problems.push(`${w}.count: must be an integer >= 1`);
    checkStringMap(n.labels, `${w}.labels`, problems);
  });
}

function checkApis(v: unknown, where: string, problems: string[]): void {
  if (v === undefined) return;
  try {
    resolveApis(v as ApiSpec);
  } catch (e) {
    problems.push(`${where}: ${(e as Error).message}`);
  }
}

/** Checks a config object (parsed YAML/JSON or built in code). Throws ConfigError listing every problem. */
export function validateConfig(raw: unknown): SimulatorConfig {
  const problems: string[] = [];
  if (!isRecord(raw)) throw new ConfigError(["the config must be an object with a clusters list"]);
  if (raw.admin !== undefined && raw.admin !== false) {
    if (!isRecord(raw.admin)) problems.push("admin: must be an object like {host, port} or false");
    else {
      if (raw.admin.port !== undefined && !isPort(raw.admin.port)) problems.push("admin.port: must be an integer 0..65535");
      if (raw.admin.host !== undefined && typeof raw.admin.host !== "string") problems.push("admin.host: must be a string");
    }
  }
  if (raw.defaults !== undefined) {
    if (!isRecord(raw.defaults)) problems.push("defaults: must be an object");
    else {
      const d = raw.defaults;
      if (d.readyDelayMs !== undefined && !isMs(d.readyDelayMs)) problems.push("defaults.readyDelayMs: must be a number >= 0");
      if (d.host !== undefined && typeof d.host !== "string") problems.push("defaults.host: must be a string");
      if (d.kubernetesVersion !== undefined && typeof d.kubernetesVersion !== "string") problems.push("defaults.kubernetesVersion: must be a string");
      checkNodes(d.nodes, "defaults.nodes", problems);
      checkApis(d.apis, "defaults.apis", problems);
    }
  }
  if (!Array.isArray(raw.clusters)) problems.push("clusters: must be a list");
  const names = new Set<string>();
  const ports = new Map<number, string>();
  for (const [i, c] of (Array.isArray(raw.clusters) ? raw.clusters : []).entries()) {
    const w = `clusters[${i}]`;
    if (!isRecord(c)) {
      problems.push(`${w}: must be an object`);
      continue;
    }
    if (typeof c.name !== "string" || !DNS_LABEL.test(c.name)) problems.push(`${w}.name: must be a DNS label (lower-case letters, digits, '-'), got ${JSON.stringify(c.name)}`);
    else if (names.has(c.name)) problems.push(`${w}.name: duplicate cluster name ${c.name}`);
    else names.add(c.name);
    if (c.port !== undefined && !isPort(c.port)) problems.push(`${w}.port: must be an integer 0..65535`);
    else if (typeof c.port === "number" && c.port > 0) {
      const other = ports.get(c.port);
      if (other !== undefined) problems.push(`${w}.port: ${c.port} is also used by ${other}`);
      ports.set(c.port, String(c.name));
    }
    for (const f of ["host", "token", "region", "zone", "provider", "kubernetesVersion"] as const) {
      if (c[f] !== undefined && typeof c[f] !== "string") problems.push(`${w}.${f}: must be a string`);
    }
    if (c.token === "") problems.push(`${w}.token: must not be empty`);
    if (c.readyDelayMs !== undefined && !isMs(c.readyDelayMs)) problems.push(`${w}.readyDelayMs: must be a number >= 0`);
    checkStringMap(c.labels, `${w}.labels`, problems);
    checkNodes(c.nodes, `${w}.nodes`, problems);
    checkApis(c.apis, `${w}.apis`, problems);
    if (c.fault !== undefined) checkFault(c.fault, `${w}.fault`, problems);
  }
  if (problems.length) throw new ConfigError(problems);
  return raw as unknown as SimulatorConfig;
}

/** Parses YAML or JSON text (JSON is YAML) and validates it. */
export function parseConfig(text: string): SimulatorConfig {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new ConfigError([`not valid YAML or JSON: ${(e as Error).message}`]);
  }
  return validateConfig(raw);
}

export async function loadConfigFile(path: string): Promise<SimulatorConfig> {
  return parseConfig(await readFile(path, "utf8"));
}

/** One node with every default filled in. */
export interface ResolvedNode {
  name: string;
  cpu: string | number;
  memory: string | number;
  pods: number;
  labels?: Record<string, string>;
  unschedulable?: boolean;
}

/** Expands `count` and fills node defaults: the nodes a cluster starts with. */
export function expandNodes(nodes: readonly NodeConfig[] | undefined): ResolvedNode[] {
  const out: ResolvedNode[] = [];
  let n = 0;
  for (const node of nodes ?? DEFAULT_NODES) {
    const count = node.count ?? 1;
    for (let i = 1; i <= count; i++) {
      n++;
      const name = node.count !== undefined ? `${node.name ?? "node"}-${i}` : (node.name ?? `node-${n}`);
      out.push({
        name,
        cpu: node.cpu ?? "8",
        memory: node.memory ?? "32Gi",
        pods: node.pods ?? 110,
        ...(node.labels ? { labels: node.labels } : {}),
        ...(node.unschedulable ? { unschedulable: true } : {}),
      });
    }
  }
  return out;
}

/** Regions, zones and providers the generator cycles through, so spread constraints have something to spread over. */
export const TOPOLOGY = [
  { provider: "aws", region: "us-east-1", zones: ["us-east-1a", "us-east-1b", "us-east-1c"] },
  { provider: "gcp", region: "europe-west1", zones: ["europe-west1-b", "europe-west1-c", "europe-west1-d"] },
  { provider: "azure", region: "southeastasia", zones: ["southeastasia-1", "southeastasia-2", "southeastasia-3"] },
] as const;

export interface GenerateOptions {
  /** Names are `<prefix><i>`, i from 1. Default "member". */
  prefix?: string;
  /** Cluster i listens on basePort + i - 1; 0 (default) = free ports. */
  basePort?: number;
  host?: string;
  nodes?: NodeConfig[];
  readyDelayMs?: number;
}

/**
 * N clusters for load tests: member1..memberN with tokens `<name>-token`, spread round-robin over
 * three regions (one provider each) and their zones, labelled env=prod|staging alternately.
 */
export function generateClusters(count: number, opts: GenerateOptions = {}): ClusterConfig[] {
  const prefix = opts.prefix ?? "member";
  return Array.from({ length: count }, (_, k) => {
    const i = k + 1;
    const topo = TOPOLOGY[k % TOPOLOGY.length]!;
    const zone = topo.zones[Math.floor(k / TOPOLOGY.length) % topo.zones.length]!;
    const name = `${prefix}${i}`;
    return {
      name,
      ...(opts.host ? { host: opts.host } : {}),
      port: opts.basePort ? opts.basePort + k : 0,
      token: `${name}-token`,
      region: topo.region,
      zone,
      provider: topo.provider,
      labels: { env: k % 2 === 0 ? "prod" : "staging" },
      ...(opts.nodes ? { nodes: opts.nodes } : {}),
      ...(opts.readyDelayMs !== undefined ? { readyDelayMs: opts.readyDelayMs } : {}),
    };
  });
}
