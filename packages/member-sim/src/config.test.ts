import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { ConfigError, expandNodes, generateClusters, parseConfig, validateConfig } from "./config.js";

const problems = (raw: unknown): string[] => {
  try {
    validateConfig(raw);
    return [];
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    return e.problems;
  }
};

const invalid: [string, unknown, RegExp][] = [
  ["a config that is not an object is rejected", [], /must be an object/],
  ["a missing clusters list is rejected", {}, /clusters: must be a list/],
  ["a cluster name must be a DNS label", { clusters: [{ name: "Member_1" }] }, /clusters\[0\]\.name: must be a DNS label/],
  ["cluster names must be unique", { clusters: [{ name: "a" }, { name: "a" }] }, /duplicate cluster name a/],
  ["two clusters cannot share a fixed port", { clusters: [{ name: "a", port: 7101 }, { name: "b", port: 7101 }] }, /7101 is also used by a/],
  ["a port must be in range", { clusters: [{ name: "a", port: 70000 }] }, /port: must be an integer 0..65535/],
  ["an admin port must be in range", { admin: { port: -1 }, clusters: [] }, /admin\.port/],
  ["a node cpu must be a quantity", { clusters: [{ name: "a", nodes: [{ cpu: "lots" }] }] }, /nodes\[0\]\.cpu: not a valid quantity/],
  ["node pods must be an integer", { clusters: [{ name: "a", nodes: [{ pods: 1.5 }] }] }, /nodes\[0\]\.pods/],
  ["an unknown group version needs its resources listed", { clusters: [{ name: "a", apis: ["example.io/v1"] }] }, /example\.io\/v1 has no built-in resources/],
  ["an unknown resource of a known group needs a kind", { clusters: [{ name: "a", apis: [{ groupVersion: "apps/v1", resources: ["widgets"] }] }] }, /no built-in resource "widgets"/],
  ["a fault mode must be known", { clusters: [{ name: "a", fault: { mode: "sideways" } }] }, /fault\.mode: must be one of healthy, not-ready, unreachable, slow/],
  ["a negative delay is rejected", { defaults: { readyDelayMs: -5 }, clusters: [] }, /defaults\.readyDelayMs/],
  ["labels must be strings", { clusters: [{ name: "a", labels: { n: 1 } }] }, /labels: must be a map of strings/],
];
for (const [name, raw, want] of invalid) {
  test(`config: ${name}`, () => {
    const p = problems(raw);
    assert.ok(p.some((x) => want.test(x)), `got ${JSON.stringify(p)}`);
  });
}

test("config: every problem is reported at once", () => {
  assert.equal(problems({ clusters: [{ name: "A" }, { name: "b", port: "x" }, { name: "c", readyDelayMs: "soon" }] }).length, 3);
});

test("config: YAML and JSON both parse", () => {
  const y = parseConfig("clusters:\n  - name: a\n    port: 7101\n    nodes: [{ cpu: '2', memory: 4Gi }]\n");
  const j = parseConfig('{"clusters":[{"name":"a","port":7101,"nodes":[{"cpu":"2","memory":"4Gi"}]}]}');
  assert.deepEqual(y, j);
});

test("config: text that is not YAML is a config error", () => {
  assert.throws(() => parseConfig("clusters: [unclosed"), ConfigError);
});

test("config: the shipped example has member1..3 on ports 7101..7103 with member3 in another region", async () => {
  const cfg = parseConfig(await readFile(new URL("../clusters.example.yaml", import.meta.url), "utf8"));
  assert.deepEqual(
    cfg.clusters.map((c) => [c.name, c.port, c.token]),
    [
      ["member1", 7101, "member1-token"],
      ["member2", 7102, "member2-token"],
      ["member3", 7103, "member3-token"],
    ],
  );
  assert.deepEqual(cfg.admin, { host: "127.0.0.1", port: 7070 });
  const [m1, m2, m3] = cfg.clusters;
  assert.equal(m1!.region, m2!.region);
  assert.notEqual(m1!.zone, m2!.zone);
  assert.notEqual(m3!.region, m1!.region);
  assert.notEqual(m3!.provider, m1!.provider);
});

const nodes: [string, Parameters<typeof expandNodes>[0], string[]][] = [
  ["no nodes means three default nodes", undefined, ["node-1", "node-2", "node-3"]],
  ["named nodes keep their names", [{ name: "a" }, { name: "b" }], ["a", "b"]],
  ["unnamed nodes are numbered", [{}, {}], ["node-1", "node-2"]],
  ["a count stamps out numbered nodes", [{ name: "big", count: 2 }, { name: "small" }], ["big-1", "big-2", "small"]],
  ["an empty list means no nodes", [], []],
];
for (const [name, input, want] of nodes) {
  test(`nodes: ${name}`, () => assert.deepEqual(expandNodes(input).map((n) => n.name), want));
}

test("nodes: defaults fill cpu, memory and pods", () => {
  assert.deepEqual(expandNodes([{ name: "n" }]), [{ name: "n", cpu: "8", memory: "32Gi", pods: 110 }]);
});

test("generate: N clusters get names, tokens, consecutive ports and spread topology", () => {
  const cs = generateClusters(6, { basePort: 8000 });
  assert.deepEqual(cs.map((c) => c.name), ["member1", "member2", "member3", "member4", "member5", "member6"]);
  assert.deepEqual(cs.map((c) => c.port), [8000, 8001, 8002, 8003, 8004, 8005]);
  assert.equal(cs[0]!.token, "member1-token");
  assert.deepEqual(cs.map((c) => c.region), ["us-east-1", "europe-west1", "southeastasia", "us-east-1", "europe-west1", "southeastasia"]);
  assert.deepEqual(cs.map((c) => c.provider), ["aws", "gcp", "azure", "aws", "gcp", "azure"]);
  assert.notEqual(cs[0]!.zone, cs[3]!.zone);
  assert.deepEqual(cs.map((c) => c.labels!.env), ["prod", "staging", "prod", "staging", "prod", "staging"]);
  validateConfig({ clusters: generateClusters(100) });
});

test("generate: without a base port every cluster takes a free port", () => {
  assert.ok(generateClusters(3, { prefix: "load-" }).every((c) => c.port === 0 && c.name.startsWith("load-")));
});
