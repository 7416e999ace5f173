import { parseArgs } from "node:util";
import { generateClusters, parseConfig, validateConfig, type NodeConfig, type SimulatorConfig } from "./config.js";

export const USAGE = `Usage: flotilla-member-sim (--config FILE | --count N) [options]

Simulated Kubernetes member clusters, each on its own port, with an admin API.

  -c, --config FILE       clusters.yaml (YAML or JSON)
  -n, --count N           generate N clusters (member1..memberN) instead of a config file
      --prefix P          name prefix for generated clusters (default "member")
      --base-port P       generated cluster i listens on P+i-1 (default 0: free ports)
      --nodes N           nodes per generated cluster (default 3)
      --node-cpu Q        allocatable cpu per generated node (default "8")
      --node-memory Q     allocatable memory per generated node (default "32Gi")
      --node-pods N       pod slots per generated node (default 110)
      --host ADDR         listen address of the clusters (default 127.0.0.1)
      --admin-host ADDR   admin listen address (default 127.0.0.1)
      --admin-port P      admin port (default 7070; 0 = free port)
      --no-admin          no admin listener
      --ready-delay-ms MS delay before workload changes take effect (default 1000)
      --print-config      print the resulting config as YAML and exit
      --json              print the clusters as one JSON line instead of a table
  -h, --help              this text
`;

export interface CliOptions {
  help: boolean;
  printConfig: boolean;
  json: boolean;
  config?: string;
  count?: number;
  prefix?: string;
  basePort?: number;
  nodes?: number;
  nodeCpu?: string;
  nodeMemory?: string;
  nodePods?: number;
  host?: string;
  adminHost?: string;
  adminPort?: number;
  noAdmin: boolean;
  readyDelayMs?: number;
}

export class UsageError extends Error {
  override readonly name = "UsageError";
}

function int(flag: string, v: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < min || n > max) throw new UsageError(`--${flag}: expected an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
  return n;
}

/** Parses the command line. Throws UsageError on unknown flags, bad numbers or a missing source. */
export function parseCliArgs(argv: string[]): CliOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        config: { type: "string", short: "c" },
        count: { type: "string", short: "n" },
        prefix: { type: "string" },
        "base-port": { type: "string" },
        nodes: { type: "string" },
        "node-cpu": { type: "string" },
        "node-memory": { type: "string" },
        "node-pods": { type: "string" },
        host: { type: "string" },
        "admin-host": { type: "string" },
        "admin-port": { type: "string" },
        "no-admin": { type: "boolean" },
        "ready-delay-ms": { type: "string" },
        "print-config": { type: "boolean" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const s = (k: string) => values[k] as string | undefined;
  const opts: CliOptions = {
    help: values.help === true,
    printConfig: values["print-config"] === true,
    json: values.json === true,
    noAdmin: values["no-admin"] === true,
  };
  const set = <K extends keyof CliOptions>(k: K, v: CliOptions[K] | undefined) => {
    if (v !== undefined) opts[k] = v;
  };
  set("config", s("config"));
  set("count", int("count", s("count"), 1, 10_000));
  set("prefix", s("prefix"));
  set("basePort", int("base-port", s("base-port"), 0, 65535));
  set("nodes", int("nodes", s("nodes"), 0, 10_000));
  set("nodeCpu", s("node-cpu"));
  set("nodeMemory", s("node-memory"));
  set("nodePods", int("node-pods", s("node-pods"), 0, 100_000));
  set("host", s("host"));
  set("adminHost", s("admin-host"));
  set("adminPort", int("admin-port", s("admin-port"), 0, 65535));
  set("readyDelayMs", int("ready-delay-ms", s("ready-delay-ms"), 0));
  if (opts.help) return opts;
  if (opts.config === undefined && opts.count === undefined) throw new UsageError("give --config FILE or --count N");
  if (opts.config !== undefined && opts.count !== undefined) throw new UsageError("--config and --count cannot be combined");
  if (opts.basePort && opts.count && opts.basePort + opts.count - 1 > 65535) throw new UsageError("--base-port + --count goes past port 65535");
  return opts;
}

export const DEFAULT_ADMIN_PORT = 7070;

/** The simulator config the options describe; `readText` reads the --config file. */
export async function configFromOptions(opts: CliOptions, readText: (path: string) => Promise<string>): Promise<SimulatorConfig> {
  let cfg: SimulatorConfig;
  if (opts.config !== undefined) {
    cfg = parseConfig(await readText(opts.config));
  } else {
    const node: NodeConfig = {
      name: "node",
      count: opts.nodes ?? 3,
      cpu: opts.nodeCpu ?? "8",
      memory: opts.nodeMemory ?? "32Gi",
      pods: opts.nodePods ?? 110,
    };
    cfg = {
      clusters: generateClusters(opts.count!, {
        ...(opts.prefix !== undefined ? { prefix: opts.prefix } : {}),
        ...(opts.basePort !== undefined ? { basePort: opts.basePort } : {}),
        nodes: node.count === 0 ? [] : [node],
      }),
    };
  }
  if (opts.noAdmin) cfg.admin = false;
  else {
    const admin = cfg.admin === false ? {} : (cfg.admin ?? {});
    cfg.admin = {
      host: opts.adminHost ?? admin.host ?? "127.0.0.1",
      port: opts.adminPort ?? admin.port ?? DEFAULT_ADMIN_PORT,
    };
  }
  if (opts.readyDelayMs !== undefined || opts.host !== undefined) {
    cfg.defaults = {
      ...(cfg.defaults ?? {}),
      ...(opts.readyDelayMs !== undefined ? { readyDelayMs: opts.readyDelayMs } : {}),
      ...(opts.host !== undefined ? { host: opts.host } : {}),
    };
  }
  return validateConfig(cfg);
}
