import { test } from "node:test";
import assert from "node:assert/strict";
import type { AnyOverridePolicy, Cluster, Overriders } from "@flotilla/api";
import {
  OverrideError,
  appliedOverridesAnnotation,
  applyJsonPatch,
  applyOverriders,
  applyOverrides,
  matchingOverridePolicies,
  overrideEntries,
  overrideImage,
  parseImage,
} from "./overrides.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const deployment = (image = "nginx:1.19.0"): Json => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "nginx", namespace: "default", labels: { app: "nginx" } },
  spec: {
    replicas: 2,
    template: {
      metadata: { labels: { app: "nginx" } },
      spec: {
        initContainers: [{ name: "init", image: "busybox:1" }],
        containers: [
          { name: "nginx", image, command: ["nginx", "-g", "daemon off;"] },
          { name: "sidecar", image: "fictional.registry.example/sidecar:v1.0.0" },
        ],
      },
    },
  },
});

const policy = (name: string, spec: Json, kind = "OverridePolicy", namespace: string | undefined = "default"): AnyOverridePolicy => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind,
  metadata: kind === "OverridePolicy" ? { name, namespace } : { name },
  spec,
});

const cluster = (name: string, labels: Record<string, string> = {}, spec: Json = {}): Cluster => ({
  apiVersion: "cluster.karmada.io/v1alpha1",
  kind: "Cluster",
  metadata: { name, labels },
  spec,
});

// ---- selection

test("policies apply in order of implicit priority (no selectors, kind, labels, name), then by name", () => {
  const t = deployment();
  const ps = [
    policy("z-by-name", { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }] }),
    policy("b-by-kind", { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }] }),
    policy("a-by-label", { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", labelSelector: { matchLabels: { app: "nginx" } } }] }),
    policy("c-all", {}),
    policy("a-all", { resourceSelectors: [] }),
    policy("a-by-kind", { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }] }),
    policy("other-name", { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "other" }] }),
    policy("other-kind", { resourceSelectors: [{ apiVersion: "v1", kind: "ConfigMap" }] }),
    policy("other-labels", { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", labelSelector: { matchLabels: { app: "db" } } }] }),
  ];
  assert.deepEqual(
    matchingOverridePolicies(t, ps).map((p) => p.metadata.name),
    ["a-all", "a-by-kind", "b-by-kind", "c-all", "a-by-label", "z-by-name"],
  );
});

test("a policy's best selector decides its priority", () => {
  const t = deployment();
  const ps = [
    policy("a", { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }, { apiVersion: "apps/v1", kind: "Deployment" }] }),
    policy("b", { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", labelSelector: { matchLabels: { app: "nginx" } } }] }),
  ];
  assert.deepEqual(
    matchingOverridePolicies(t, ps).map((p) => p.metadata.name),
    ["b", "a"],
  );
});

const rulesPolicy = policy("p", {
  overrideRules: [
    { targetCluster: { clusterNames: ["member1"] }, overriders: { labelsOverrider: [{ operator: "add", value: { rule: "names" } }] } },
    { targetCluster: { labelSelector: { matchLabels: { env: "prod" } } }, overriders: { labelsOverrider: [{ operator: "add", value: { rule: "labels" } }] } },
    { targetCluster: { fieldSelector: { matchExpressions: [{ key: "region", operator: "In", values: ["eu"] }] } }, overriders: { labelsOverrider: [{ operator: "add", value: { rule: "fields" } }] } },
    { targetCluster: { exclude: ["member2"] }, overriders: { labelsOverrider: [{ operator: "add", value: { rule: "exclude" } }] } },
    { overriders: { labelsOverrider: [{ operator: "add", value: { rule: "all" } }] } },
  ],
});
const rulesOf = (c: Cluster) => overrideEntries([rulesPolicy], c.metadata.name ?? "", c).map((e) => e.overriders.labelsOverrider?.[0]?.value?.rule);

for (const [name, c, want] of [
  ["a cluster named by clusterNames gets that rule (and the ones for all)", cluster("member1"), ["names", "exclude", "all"]],
  ["a cluster matching the label selector gets that rule", cluster("member3", { env: "prod" }), ["labels", "exclude", "all"]],
  ["a cluster matching the field selector (region) gets that rule", cluster("member4", {}, { region: "eu" }), ["fields", "exclude", "all"]],
  ["an excluded cluster does not get the exclude rule", cluster("member2"), ["all"]],
] as const) {
  test(name, () => assert.deepEqual(rulesOf(c), want));
}

test("the deprecated targetCluster and overriders act as the only rule", () => {
  const p = policy("old", { targetCluster: { clusterNames: ["member1"] }, overriders: { plaintext: [{ path: "/spec/replicas", operator: "replace", value: 5 }] } });
  assert.equal(overrideEntries([p], "member1", cluster("member1")).length, 1);
  assert.equal(overrideEntries([p], "member2", cluster("member2")).length, 0);
});

test("a rule with a targetCluster cannot be decided without the Cluster", () => {
  assert.throws(() => overrideEntries([rulesPolicy], "gone", undefined), OverrideError);
  assert.equal(overrideEntries([policy("p", { overrideRules: [{ overriders: {} }] })], "gone", undefined).length, 1);
});

test("the applied-overrides annotation lists each entry sorted by policy name, label maps by key, and is absent without entries", () => {
  assert.equal(appliedOverridesAnnotation([]), undefined);
  assert.equal(
    appliedOverridesAnnotation([
      { policyName: "b", overriders: { labelsOverrider: [{ operator: "add", value: { b: "2", a: "1" } }] } },
      { policyName: "a", overriders: {} },
    ]),
    '[{"policyName":"a","overriders":{}},{"policyName":"b","overriders":{"labelsOverrider":[{"operator":"add","value":{"a":"1","b":"2"}}]}}]',
  );
});

// ---- JSON patch

for (const [name, doc, ops, want] of [
  ["add onto an existing member replaces it", { a: 1 }, [{ op: "add", path: "/a", value: 2 }], { a: 2 }],
  ["add inserts into a list, '-' appends", { l: [1, 3] }, [{ op: "add", path: "/l/1", value: 2 }, { op: "add", path: "/l/-", value: 4 }], { l: [1, 2, 3, 4] }],
  ["a negative index counts from the end", { l: [1, 2, 3] }, [{ op: "replace", path: "/l/-1", value: 9 }], { l: [1, 2, 9] }],
  ["a missing value is null", { a: 1 }, [{ op: "replace", path: "/a" }], { a: null }],
  ["keys are unescaped (~1 is /, ~0 is ~)", { m: {} }, [{ op: "add", path: "/m/a~1b~0c", value: 1 }], { m: { "a/b~c": 1 } }],
] as const) {
  test(`JSON patch: ${name}`, () => assert.deepEqual(applyJsonPatch(doc, ops as never), want));
}

for (const [name, doc, ops] of [
  ["replace of a missing member fails", { a: 1 }, [{ op: "replace", path: "/b", value: 2 }]],
  ["remove of a missing member fails", { a: 1 }, [{ op: "remove", path: "/b" }]],
  ["add never creates parents", { a: 1 }, [{ op: "add", path: "/b/c", value: 2 }]],
  ["an index past the end fails", { l: [1] }, [{ op: "replace", path: "/l/3", value: 2 }]],
  ["a pointer through __proto__ fails", { a: {} }, [{ op: "add", path: "/__proto__/x", value: 1 }]],
] as const) {
  test(`JSON patch: ${name}`, () => assert.throws(() => applyJsonPatch(doc, ops as never), OverrideError));
}

test("JSON patch: a failing patch changes nothing", () => {
  const doc = { a: 1, b: 2 };
  assert.throws(() => applyJsonPatch(doc, [{ op: "replace", path: "/a", value: 5 }, { op: "remove", path: "/zz" }]));
  assert.deepEqual(doc, { a: 1, b: 2 });
});

// ---- image references

for (const [image, want] of [
  ["nginx", { hostname: "", repository: "nginx", tag: "", digest: "" }],
  ["nginx:1.19.0", { hostname: "", repository: "nginx", tag: "1.19.0", digest: "" }],
  ["library/nginx:1", { hostname: "", repository: "library/nginx", tag: "1", digest: "" }],
  ["fictional.registry.example/imagename:v1.0.0", { hostname: "fictional.registry.example", repository: "imagename", tag: "v1.0.0", digest: "" }],
  ["localhost/app", { hostname: "localhost", repository: "app", tag: "", digest: "" }],
  ["registry:5000/team/app@sha256:" + "a".repeat(64), { hostname: "registry:5000", repository: "team/app", tag: "", digest: "sha256:" + "a".repeat(64) }],
  ["app:1@sha256:" + "b".repeat(64), { hostname: "", repository: "app", tag: "1", digest: "" }],
] as const) {
  test(`image ${image} parses into its components`, () => assert.deepEqual(parseImage(image), want));
}

for (const bad of ["", "Nginx:1", "nginx:bad tag", "nginx@sha256:short"]) {
  test(`image ${JSON.stringify(bad)} fails to parse`, () => {
    assert.throws(() => overrideImage(bad, { component: "Tag", operator: "replace", value: "x" }), /^OverrideError: failed to parse image value/);
  });
}

const img = (image: string, component: string, operator: string, value?: string) => overrideImage(image, { component, operator, value });
const digest = "sha256:" + "c".repeat(64);
for (const [name, got, want] of [
  ["registry add appends to the host", img("fictional.registry.example/imagename:v1.0.0", "Registry", "add", "-us"), "fictional.registry.example-us/imagename:v1.0.0"],
  ["registry add to an image without host prefixes the value", img("myapp:1.0.0", "Registry", "add", "test-repo"), "test-repo/myapp:1.0.0"],
  ["registry replace", img("docker.io/nginx:1.0", "Registry", "replace", "registry.k8s.io"), "registry.k8s.io/nginx:1.0"],
  ["registry remove", img("fictional.registry.us/busybox:1.0", "Registry", "remove"), "busybox:1.0"],
  ["repository add", img("docker.io/nginx:1.0", "Repository", "add", "-custom"), "docker.io/nginx-custom:1.0"],
  ["repository replace", img("docker.io/nginx:1.0", "Repository", "replace", "library/httpd"), "docker.io/library/httpd:1.0"],
  ["tag replace", img("nginx:1.19.0", "Tag", "replace", "1.20.0"), "nginx:1.20.0"],
  ["tag add appends", img("nginx:1.19", "Tag", "add", "-alpine"), "nginx:1.19-alpine"],
  ["tag remove clears the tag", img("nginx:1.19", "Tag", "remove"), "nginx"],
  ["tag remove clears a digest when there is no tag", img(`nginx@${digest}`, "Tag", "remove"), "nginx"],
  ["tag replace by a digest sets the digest", img("nginx:1", "Tag", "replace", digest), `nginx@${digest}`],
  ["tag replace by something neither tag nor digest changes nothing", img("nginx:1", "Tag", "replace", "not a tag"), "nginx:1"],
] as const) {
  test(`imageOverrider: ${name}`, () => assert.equal(got, want));
}

// ---- overriders on a manifest

const images = (m: Json) => m.spec.template.spec.containers.map((c: Json) => c.image);

test("an image overrider without predicate changes every container of a Deployment, not init containers", () => {
  const m = applyOverriders(deployment(), { imageOverrider: [{ component: "Registry", operator: "replace", value: "mirror.example" }] });
  assert.deepEqual(images(m), ["mirror.example/nginx:1.19.0", "mirror.example/sidecar:v1.0.0"]);
  assert.equal(m.spec.template.spec.initContainers[0].image, "busybox:1");
});

test("an image overrider with a predicate changes only that path", () => {
  const m = applyOverriders(deployment(), { imageOverrider: [{ predicate: { path: "/spec/template/spec/containers/1/image" }, component: "Tag", operator: "replace", value: "v2" }] });
  assert.deepEqual(images(m), ["nginx:1.19.0", "fictional.registry.example/sidecar:v2"]);
});

test("an image overrider with a predicate that misses fails", () => {
  assert.throws(
    () => applyOverriders(deployment(), { imageOverrider: [{ predicate: { path: "/spec/template/spec/containers/5/image" }, component: "Tag", operator: "replace", value: "v2" }] }),
    /failed to obtain imageValue with predicate path\(\/spec\/template\/spec\/containers\/5\/image\)/,
  );
});

test("an image overrider changes a Pod's containers and nothing of other kinds (CronJob included)", () => {
  const pod: Json = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "app:1" }] } };
  assert.equal(applyOverriders(pod, { imageOverrider: [{ component: "Tag", operator: "replace", value: "2" }] }).spec.containers[0].image, "app:2");
  const cj: Json = { apiVersion: "batch/v1", kind: "CronJob", metadata: { name: "c" }, spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: "c", image: "app:1" }] } } } } } };
  assert.deepEqual(applyOverriders(cj, { imageOverrider: [{ component: "Tag", operator: "replace", value: "2" }] }), cj);
});

test("a command overrider adds to and removes from the named container's command", () => {
  const added = applyOverriders(deployment(), { commandOverrider: [{ containerName: "nginx", operator: "add", value: ["--cluster=member1"] }] });
  assert.deepEqual(added.spec.template.spec.containers[0].command, ["nginx", "-g", "daemon off;", "--cluster=member1"]);
  const removed = applyOverriders(deployment(), { commandOverrider: [{ containerName: "nginx", operator: "remove", value: ["-g", "daemon off;"] }] });
  assert.deepEqual(removed.spec.template.spec.containers[0].command, ["nginx"]);
});

test("an args overrider creates the field when absent (empty for remove) and ignores other containers", () => {
  const m = applyOverriders(deployment(), {
    argsOverrider: [
      { containerName: "sidecar", operator: "add", value: ["-v"] },
      { containerName: "nginx", operator: "remove", value: ["-v"] },
      { containerName: "missing", operator: "add", value: ["x"] },
    ],
  });
  assert.deepEqual(m.spec.template.spec.containers[1].args, ["-v"]);
  assert.deepEqual(m.spec.template.spec.containers[0].args, []);
});

test("a labels overrider adds (creating the map), replaces and removes only existing keys", () => {
  const noLabels: Json = { ...deployment(), metadata: { name: "nginx", namespace: "default" } };
  assert.deepEqual(applyOverriders(noLabels, { labelsOverrider: [{ operator: "add", value: { cluster: "member1", "example.com/team": "a" } }] }).metadata.labels, { cluster: "member1", "example.com/team": "a" });
  const m = applyOverriders(deployment(), {
    labelsOverrider: [
      { operator: "replace", value: { app: "web", absent: "x" } },
      { operator: "remove", value: { nothere: "" } },
    ],
  });
  assert.deepEqual(m.metadata.labels, { app: "web" });
  assert.deepEqual(applyOverriders(deployment(), { labelsOverrider: [{ operator: "remove", value: { app: "" } }] }).metadata.labels, {});
});

test("an annotations overrider adds annotations", () => {
  assert.deepEqual(applyOverriders(deployment(), { annotationsOverrider: [{ operator: "add", value: { "example.com/owner": "team-a" } }] }).metadata.annotations, { "example.com/owner": "team-a" });
});

test("plaintext applies as one patch: all operations or none", () => {
  const m = applyOverriders(deployment(), {
    plaintext: [
      { path: "/spec/replicas", operator: "replace", value: 5 },
      { path: "/metadata/annotations", operator: "add", value: { foo: "bar" } },
      { path: "/spec/template/spec/initContainers", operator: "remove" },
    ],
  });
  assert.equal(m.spec.replicas, 5);
  assert.deepEqual(m.metadata.annotations, { foo: "bar" });
  assert.equal(m.spec.template.spec.initContainers, undefined);
  assert.throws(() => applyOverriders(deployment(), { plaintext: [{ path: "/spec/replicas", operator: "replace", value: 5 }, { path: "/spec/missing", operator: "replace", value: 1 }] }), /replace operation does not apply: doc is missing key: \/spec\/missing/);
});

test("overriders apply in upstream's order: image, command, args, labels, annotations, field, plaintext", () => {
  // plaintext runs last, so it sees (and replaces) what the image overrider wrote
  const m = applyOverriders(deployment(), {
    plaintext: [{ path: "/spec/template/spec/containers/0/image", operator: "replace", value: "final:1" }],
    imageOverrider: [{ component: "Tag", operator: "replace", value: "2" }],
  });
  assert.equal(m.spec.template.spec.containers[0].image, "final:1");
});

const configMap = (data: Json): Json => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data });

test("a field overrider patches YAML inside a string field and writes sorted YAML back", () => {
  const m = applyOverriders(configMap({ "db.yaml": "database:\n  port: 5432\n  host: db.local\nlist:\n  - a\n" }), {
    fieldOverrider: [{ fieldPath: "/data/db.yaml", yaml: [{ subPath: "/database/host", operator: "replace", value: "db.member1" }, { subPath: "/list/-", operator: "add", value: "b" }] }],
  });
  assert.equal(m.data["db.yaml"], "database:\n  host: db.member1\n  port: 5432\nlist:\n- a\n- b\n");
});

test("a field overrider patches JSON inside a string field and writes compact JSON back", () => {
  const m = applyOverriders(configMap({ "c.json": '{"b": 1, "a": {"x": "<y>"}}' }), { fieldOverrider: [{ fieldPath: "/data/c.json", json: [{ subPath: "/b", operator: "replace", value: 2 }] }] });
  assert.equal(m.data["c.json"], '{"b":2,"a":{"x":"\\u003cy\\u003e"}}');
});

test("a field overrider on a field that is not a string fails", () => {
  assert.throws(() => applyOverriders(deployment(), { fieldOverrider: [{ fieldPath: "/spec/replicas", json: [{ subPath: "/a", operator: "remove" }] }] }), /fieldPath\(\/spec\/replicas\) is not string/);
});

test("cluster policies' entries apply before namespaced ones, so a namespaced policy wins", () => {
  const set = (v: number): Overriders => ({ plaintext: [{ path: "/spec/replicas", operator: "replace", value: v }] });
  const m = applyOverrides(deployment(), { cluster: [{ policyName: "c", overriders: set(7) }], namespaced: [{ policyName: "n", overriders: set(9) }] });
  assert.equal(m.spec.replicas, 9);
});

test("a failure names the policy whose rule failed and leaves the input unchanged", () => {
  const d = deployment();
  assert.throws(
    () => applyOverrides(d, { cluster: [], namespaced: [{ policyName: "bad", overriders: { plaintext: [{ path: "/nope/x", operator: "add", value: 1 }] } }] }),
    /^OverrideError: failed to apply override policy\(bad\): add operation does not apply: doc is missing path: \/nope\/x/,
  );
  assert.deepEqual(d, deployment());
});

test("the example policy (examples/nginx-override.yaml) on the example Deployment: a mirror image on member1, an env var on member2, a label on both", async () => {
  const { readFile } = await import("node:fs/promises");
  const { parse } = await import("yaml");
  const read = async (f: string) => parse(await readFile(new URL(`../../../../examples/${f}`, import.meta.url), "utf8")) as Json;
  const [p, d] = await Promise.all([read("nginx-override.yaml"), read("nginx-deployment.yaml")]);
  const render = (name: string) => applyOverrides(d, { cluster: [], namespaced: overrideEntries(matchingOverridePolicies(d, [p]), name, cluster(name)) });
  const m1 = render("member1");
  const m2 = render("member2");
  assert.equal(m1.spec.template.spec.containers[0].image, "mirror.example.com/nginx:1.27");
  assert.equal(m1.metadata.labels.cluster, "member1");
  assert.equal(m2.spec.template.spec.containers[0].image, d.spec.template.spec.containers[0].image);
  assert.deepEqual(m2.spec.template.spec.containers[0].env, [{ name: "REGION", value: "eu-west" }]);
  assert.equal(m2.metadata.labels.cluster, "member2");
});

// An override that writes what Kubernetes would refuse: the rendered manifest is checked as the
// gateway checks a template, and the error names the policy, the manifest's field and why.
const withRequests = (): Json => {
  const d = deployment();
  d.spec.template.spec.containers[0].resources = { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "256Mi" } };
  return d;
};
const plaintext = (path: string, value: Json, operator = "replace"): Overriders => ({ plaintext: [{ path, operator, value }] });
const REQ_CPU = "/spec/template/spec/containers/0/resources/requests/cpu";
for (const [name, overrides, want] of [
  ["a request with a trailing space", { cluster: [], namespaced: [{ policyName: "p", overriders: plaintext(REQ_CPU, "1Gi ") }] }, /^failed to apply override policy\(p\): the overridden Deployment is invalid: spec\.template\.spec\.containers\[0\]\.resources\.requests\[cpu\]: Invalid value: "1Gi ": quantities must match the regular expression/],
  ["a leading space, from a cluster policy", { cluster: [{ policyName: "c", overriders: plaintext(REQ_CPU, " 100m") }], namespaced: [] }, /^failed to apply cluster override policy\(c\): the overridden Deployment is invalid: spec\.template\.spec\.containers\[0\]\.resources\.requests\[cpu\]: Invalid value: " 100m"/],
  ["a space inside a limit", { cluster: [], namespaced: [{ policyName: "p", overriders: plaintext("/spec/template/spec/containers/0/resources/limits/memory", "1 Gi") }] }, /resources\.limits\[memory\]: Invalid value: "1 Gi"/],
  ["a whole resources object added with a bad quantity", { cluster: [], namespaced: [{ policyName: "p", overriders: plaintext("/spec/template/spec/containers/1/resources", { limits: { cpu: "2\n" } }, "add") }] }, /spec\.template\.spec\.containers\[1\]\.resources\.limits\[cpu\]: Invalid value: "2\\n"/],
  ["a request that is not a quantity at all", { cluster: [], namespaced: [{ policyName: "p", overriders: plaintext(REQ_CPU, true) }] }, /resources\.requests\[cpu\]: Invalid value: true: must be of type string or number/],
  ["a negative request", { cluster: [], namespaced: [{ policyName: "p", overriders: plaintext(REQ_CPU, "-1") }] }, /resources\.requests\[cpu\]: Invalid value: "-1": must be greater than or equal to 0/],
  ["replicas that are a string", { cluster: [], namespaced: [{ policyName: "p", overriders: plaintext("/spec/replicas", "3") }] }, /spec\.replicas: Invalid value: "3": must be of type integer/],
  ["labels that are a list", { cluster: [], namespaced: [{ policyName: "p", overriders: plaintext("/metadata/labels", ["a"]) }] }, /metadata\.labels/],
  [
    "each problem is put on the policy that wrote it",
    { cluster: [{ policyName: "c", overriders: plaintext(REQ_CPU, "1Gi ") }], namespaced: [{ policyName: "p", overriders: plaintext("/spec/template/spec/containers/0/resources/limits/memory", " 1Gi") }] },
    /^failed to apply cluster override policy\(c\): the overridden Deployment is invalid: spec\.template\.spec\.containers\[0\]\.resources\.requests\[cpu\]: [^;]*; failed to apply override policy\(p\): the overridden Deployment is invalid: spec\.template\.spec\.containers\[0\]\.resources\.limits\[memory\]: Invalid value: " 1Gi"/,
  ],
  [
    "a later policy that writes the same bad value again is not blamed; the one that first wrote it is",
    { cluster: [], namespaced: [{ policyName: "a", overriders: plaintext(REQ_CPU, "1Gi ") }, { policyName: "b", overriders: plaintext(REQ_CPU, "1Gi ") }] },
    /^failed to apply override policy\(a\): [^;]*requests\[cpu\][^;]*$/,
  ],
] as const) {
  test(`an override that makes the manifest invalid fails: ${name}`, () => {
    const d = withRequests();
    assert.throws(() => applyOverrides(d, overrides as never), (e: Error) => {
      assert.ok(e instanceof OverrideError, String(e));
      assert.match(e.message, want);
      return true;
    });
    assert.deepEqual(d, withRequests(), "the input is unchanged");
  });
}

for (const [name, overrides, check] of [
  ["valid quantities, a string and a number", { cluster: [], namespaced: [{ policyName: "p", overriders: { plaintext: [{ path: REQ_CPU, operator: "replace", value: "1.5" }, { path: "/spec/template/spec/containers/0/resources/limits/memory", operator: "replace", value: 1073741824 }] } }] }, (m: Json) => assert.equal(m.spec.template.spec.containers[0].resources.requests.cpu, "1.5")],
  ["a bad value written and then fixed by a later policy", { cluster: [{ policyName: "c", overriders: plaintext(REQ_CPU, "1Gi ") }], namespaced: [{ policyName: "p", overriders: plaintext(REQ_CPU, "1Gi") }] }, (m: Json) => assert.equal(m.spec.template.spec.containers[0].resources.requests.cpu, "1Gi")],
  ["a field the checks do not read", { cluster: [], namespaced: [{ policyName: "p", overriders: plaintext("/spec/template/spec/containers/0/env", [{ name: "A", value: " 1Gi " }], "add") }] }, (m: Json) => assert.equal(m.spec.template.spec.containers[0].env[0].value, " 1Gi ")],
] as const) {
  test(`an override that leaves the manifest valid renders: ${name}`, () => check(applyOverrides(withRequests(), overrides as never)));
}

test("a problem the manifest had before the overrides is not put on them", () => {
  const d = withRequests();
  d.spec.template.spec.containers[0].resources.requests.cpu = "1Gi ";
  const m = applyOverrides(d, { cluster: [], namespaced: [{ policyName: "p", overriders: { labelsOverrider: [{ operator: "add", value: { tier: "web" } }] } }] });
  assert.equal(m.metadata.labels.tier, "web");
});
