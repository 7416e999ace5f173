#!/usr/bin/env node
import { readFile } from "node:fs/promises";
import { stringify } from "yaml";
import { configFromOptions, parseCliArgs, USAGE, UsageError } from "./cli-args.js";
import { ConfigError } from "./config.js";
import { startSimulator } from "./simulator.js";

async function main(argv: string[]): Promise<number> {
  let opts;
  try {
    opts = parseCliArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`flotilla-member-sim: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    throw e;
  }
  if (opts.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  let config;
  try {
    config = await configFromOptions(opts, (p) => readFile(p, "utf8"));
  } catch (e) {
    if (e instanceof ConfigError || (e as NodeJS.ErrnoException).code === "ENOENT") {
      process.stderr.write(`flotilla-member-sim: ${(e as Error).message}\n`);
      return 2;
    }
    throw e;
  }
  if (opts.printConfig) {
    process.stdout.write(stringify(config, { aliasDuplicateObjects: false }));
    return 0;
  }

  const sim = await startSimulator(config, {
    onError: (err, req) => process.stderr.write(`member-sim: ${req.cluster ?? "?"} ${req.method} ${req.url}: ${(err as Error)?.stack ?? String(err)}\n`),
  });
  if (opts.json) {
    process.stdout.write(JSON.stringify({ admin: sim.adminUrl ?? null, clusters: sim.info() }) + "\n");
  } else {
    const rows = sim.info().map((c) => [c.name, c.server, c.token, [c.provider, c.region, c.zone].filter(Boolean).join("/"), c.fault.mode]);
    const head = ["NAME", "SERVER", "TOKEN", "PROVIDER/REGION/ZONE", "FAULT"];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const line = (r: string[]) => r.map((x, i) => x.padEnd(widths[i]!)).join("  ").trimEnd() + "\n";
    process.stdout.write(line(head) + rows.map(line).join(""));
    process.stdout.write(`${sim.clusters.length} cluster(s) up; admin API ${sim.adminUrl ?? "off"}\n`);
  }

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.stderr.write(`member-sim: ${signal}, stopping\n`);
      resolve();
    };
    process.once("SIGINT", () => stop("SIGINT"));
    process.once("SIGTERM", () => stop("SIGTERM"));
  });
  const force = setTimeout(() => process.exit(1), 5000);
  force.unref();
  await sim.close();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`flotilla-member-sim: ${(err as Error)?.message ?? String(err)}\n`);
    process.exit(1);
  },
);
