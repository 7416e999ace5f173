import { test } from "node:test";
import assert from "node:assert/strict";
import { configFromOptions, parseCliArgs, UsageError } from "./cli-args.js";

const bad: [string, string[], RegExp][] = [
  ["no source is a usage error", [], /--config FILE or --count N/],
  ["both sources are a usage error", ["--config", "x.yaml", "--count", "2"], /cannot be combined/],
  ["an unknown flag is a usage error", ["--count", "2", "--colour"], /colour/],
  ["a non-numeric count is a usage error", ["--count", "many"], /--count: expected an integer/],
  ["a zero count is a usage error", ["--count", "0"], /--count/],
  ["a port out of range is a usage error", ["--count", "1", "--admin-port", "99999"], /--admin-port/],
  ["ports past 65535 are a usage error", ["--count", "10", "--base-port", "65530"], /past port 65535/],
  ["a stray positional is a usage error", ["--count", "1", "extra"], /extra|positional/i],
];
for (const [name, argv, want] of bad) {
  test(`args: ${name}`, () => assert.throws(() => parseCliArgs(argv), (e: unknown) => e instanceof UsageError && want.test(e.message)));
}

test("args: help needs no source", () => {
  assert.equal(parseCliArgs(["-h"]).help, true);
});

test("args: --count builds generated clusters with the admin on 7070 by default", async () => {
  const cfg = await configFromOptions(parseCliArgs(["--count", "3", "--base-port", "9101", "--nodes", "2", "--node-cpu", "4", "--ready-delay-ms", "200"]), () => {
    throw new Error("no file");
  });
  assert.deepEqual(cfg.admin, { host: "127.0.0.1", port: 7070 });
  assert.equal(cfg.defaults?.readyDelayMs, 200);
  assert.deepEqual(cfg.clusters.map((c) => [c.name, c.port]), [
    ["member1", 9101],
    ["member2", 9102],
    ["member3", 9103],
  ]);
  assert.deepEqual(cfg.clusters[0]!.nodes, [{ name: "node", count: 2, cpu: "4", memory: "32Gi", pods: 110 }]);
});

test("args: --config reads the file and flags override its admin listener", async () => {
  const opts = parseCliArgs(["-c", "clusters.yaml", "--admin-port", "0", "--host", "0.0.0.0"]);
  const cfg = await configFromOptions(opts, async (p) => {
    assert.equal(p, "clusters.yaml");
    return "admin: { host: 127.0.0.1, port: 7070 }\nclusters: [{ name: m1 }]\n";
  });
  assert.deepEqual(cfg.admin, { host: "127.0.0.1", port: 0 });
  assert.equal(cfg.defaults?.host, "0.0.0.0");
  assert.deepEqual(cfg.clusters, [{ name: "m1" }]);
});

test("args: --no-admin turns the admin listener off", async () => {
  const cfg = await configFromOptions(parseCliArgs(["--count", "1", "--no-admin"]), async () => "");
  assert.equal(cfg.admin, false);
});
