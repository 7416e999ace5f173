import { test } from "node:test";
import assert from "node:assert/strict";
import { InvalidError, KARMADA, applyDefaults, decodeTyped, validateObject, type KubeObject } from "@flotilla/api";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const op = (spec: Json, meta: Json = { name: "nginx-override", namespace: "default" }): Json => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "OverridePolicy",
  metadata: meta,
  spec,
});
const cop = (spec: Json): Json => ({ ...op(spec, { name: "all-override" }), kind: "ClusterOverridePolicy" });
const deployment = [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }];

/** The fields of every cause an OverridePolicy (or a ClusterOverridePolicy) is refused for; [] when accepted. */
function causes(o: Json): string[] {
  const type = o.kind === "ClusterOverridePolicy" ? KARMADA.clusterOverridePolicy : KARMADA.overridePolicy;
  try {
    validateObject(type, decodeTyped(type, o) as KubeObject);
    return [];
  } catch (e) {
    if (!(e instanceof InvalidError)) throw e;
    return e.causes.map((c) => `${c.field}: ${c.message}`);
  }
}

const cases: { name: string; policy: Json; want: RegExp[] }[] = [
  {
    name: "a policy with one rule per cluster and every overrider is accepted",
    policy: op({
      resourceSelectors: deployment,
      overrideRules: [
        {
          targetCluster: { clusterNames: ["member1"], fieldSelector: { matchExpressions: [{ key: "region", operator: "In", values: ["eu"] }] } },
          overriders: {
            imageOverrider: [{ predicate: { path: "/spec/template/spec/containers/0/image" }, component: "Tag", operator: "replace", value: "1.25" }],
            plaintext: [{ path: "/spec/replicas", operator: "replace", value: 3 }],
            labelsOverrider: [{ operator: "add", value: { env: "prod" } }],
            annotationsOverrider: [{ operator: "remove", value: { "example.com/note": "" } }],
            commandOverrider: [{ containerName: "nginx", operator: "add", value: ["--debug"] }],
            argsOverrider: [{ containerName: "nginx", operator: "remove", value: ["-v"] }],
            fieldOverrider: [{ fieldPath: "/data/config", yaml: [{ subPath: "/a", operator: "replace", value: "b" }] }],
          },
        },
      ],
    }),
    want: [],
  },
  {
    name: "the deprecated targetCluster and overriders alone are accepted",
    policy: cop({ resourceSelectors: deployment, targetCluster: { clusterNames: ["member1"] }, overriders: { plaintext: [{ path: "/spec/replicas", operator: "remove" }] } }),
    want: [],
  },
  {
    name: "overrideRules with the deprecated targetCluster is refused",
    policy: op({ overrideRules: [{ overriders: {} }], targetCluster: { clusterNames: ["member1"] } }),
    want: [/^spec\.targetCluster: .*overrideRules and targetCluster can't co-exist/],
  },
  {
    name: "overrideRules with deprecated overriders is refused",
    policy: op({ overrideRules: [{ overriders: {} }], overriders: { labelsOverrider: [{ operator: "add", value: { a: "b" } }] } }),
    want: [/^spec\.overriders: .*overrideRules and overriders can't co-exist/],
  },
  {
    name: "overrideRules with a deprecated fieldOverrider only is accepted (it does not count)",
    policy: op({ overrideRules: [{ overriders: {} }], overriders: { fieldOverrider: [{ fieldPath: "/a", json: [{ subPath: "/b", operator: "remove" }] }] } }),
    want: [],
  },
  {
    name: "a targetCluster field selector takes only provider/region/zone with In/NotIn",
    policy: op({ overrideRules: [{ targetCluster: { fieldSelector: { matchExpressions: [{ key: "name", operator: "Exists" }] } }, overriders: {} }] }),
    want: [/^spec\.overrideRules\[0\]\.targetCluster\.fieldSelector\.matchExpressions\[0\]\.key: Unsupported/, /^spec\.overrideRules\[0\]\.targetCluster\.fieldSelector\.matchExpressions\[0\]\.operator: Unsupported/],
  },
  {
    name: "label and annotation overriders need valid keys and label values",
    policy: op({
      overrideRules: [{ overriders: { labelsOverrider: [{ operator: "add", value: { "bad key": "x", ok: "bad value!" } }], annotationsOverrider: [{ operator: "add", value: { "a/b/c": "x" } }] } }],
    }),
    want: [
      /^spec\.overrideRules\[0\]\.overriders\.annotationsOverrider\[0\]\.value\[a\/b\/c\]: /,
      /^spec\.overrideRules\[0\]\.overriders\.labelsOverrider\[0\]\.value\[bad key\]: /,
      /^spec\.overrideRules\[0\]\.overriders\.labelsOverrider\[0\]\.value\[ok\]: /,
    ],
  },
  {
    name: "an image predicate path must start with a slash",
    policy: op({ overrideRules: [{ overriders: { imageOverrider: [{ predicate: { path: "spec/containers/0/image" }, component: "Registry", operator: "add", value: "x" }] } }] }),
    want: [/^spec\.overrideRules\[0\]\.overriders\.imageOverrider\[0\]\.predicate\.path: .*path should be start with \/ character/],
  },
  {
    name: "a field overrider needs exactly one of json and yaml",
    policy: op({
      overrideRules: [
        {
          overriders: {
            fieldOverrider: [
              { fieldPath: "/data/a", json: [{ subPath: "/x", operator: "remove" }], yaml: [{ subPath: "/x", operator: "remove" }] },
              { fieldPath: "/data/b" },
            ],
          },
        },
      ],
    }),
    want: [
      /^spec\.overrideRules\[0\]\.overriders\.fieldOverrider\[0\]: .*FieldOverrider has both YAML and JSON set\. Only one is allowed/,
      /^spec\.overrideRules\[0\]\.overriders\.fieldOverrider\[1\]: .*FieldOverrider must have either JSON or YAML set/,
    ],
  },
  {
    name: "field overrider pointers start with a slash, add needs a value and remove has none",
    policy: op({
      overrideRules: [
        {
          overriders: {
            fieldOverrider: [
              {
                fieldPath: "data/a",
                json: [
                  { subPath: "x", operator: "add" },
                  { subPath: "/y", operator: "remove", value: 1 },
                ],
              },
            ],
          },
        },
      ],
    }),
    want: [
      /^spec\.overrideRules\[0\]\.overriders\.fieldOverrider\[0\]\.fieldPath: /,
      /^spec\.overrideRules\[0\]\.overriders\.fieldOverrider\[0\]\.json\[0\]\.subPath: /,
      /^spec\.overrideRules\[0\]\.overriders\.fieldOverrider\[0\]\.json\[0\]\.value: .*value is required for add operation/,
      /^spec\.overrideRules\[0\]\.overriders\.fieldOverrider\[0\]\.json\[1\]\.value: .*value is not allowed for remove operation/,
    ],
  },
  {
    name: "operators and image components are the CRD's enums, in rules and deprecated overriders alike",
    policy: cop({
      overriders: { plaintext: [{ path: "/a", operator: "move" }], imageOverrider: [{ component: "Digest", operator: "add" }], commandOverrider: [{ containerName: "c", operator: "replace" }] },
    }),
    want: [/^spec\.overriders\.plaintext\[0\]\.operator: Unsupported/, /^spec\.overriders\.imageOverrider\[0\]\.component: Unsupported/, /^spec\.overriders\.commandOverrider\[0\]\.operator: Unsupported/],
  },
  {
    name: "a plaintext value at a container's resource quantity that Kubernetes' quantity parser refuses is refused, naming the value",
    policy: op({
      resourceSelectors: deployment,
      overrideRules: [
        {
          overriders: {
            plaintext: [
              { path: "/spec/template/spec/containers/0/resources/requests/cpu", operator: "replace", value: "1Gi " },
              { path: "/spec/template/spec/initContainers/1/resources/limits/memory", operator: "add", value: " 64Mi" },
              { path: "/spec/containers/0/resources/requests/nvidia.com~1gpu", operator: "add", value: "1 " },
              { path: "/spec/jobTemplate/spec/template/spec/ephemeralContainers/-1/resources/limits/cpu", operator: "replace", value: "one" },
              { path: "/spec/template/spec/containers/0/resources/limits/cpu", operator: "replace", value: true },
            ],
          },
        },
        { overriders: { plaintext: [{ path: "/spec/template/spec/containers/0/resources/limits/memory", operator: "replace", value: "1 Gi" }] } },
      ],
    }),
    want: [
      /^spec\.overrideRules\[0\]\.overriders\.plaintext\[0\]\.value: Invalid value: "1Gi ": quantities must match the regular expression .*\/spec\/template\/spec\/containers\/0\/resources\/requests\/cpu/,
      /^spec\.overrideRules\[0\]\.overriders\.plaintext\[1\]\.value: Invalid value: " 64Mi": quantities must match/,
      /^spec\.overrideRules\[0\]\.overriders\.plaintext\[2\]\.value: Invalid value: "1 ": quantities must match/,
      /^spec\.overrideRules\[0\]\.overriders\.plaintext\[3\]\.value: Invalid value: "one": quantities must match/,
      /^spec\.overrideRules\[0\]\.overriders\.plaintext\[4\]\.value: Invalid value: true: must be a quantity/,
      /^spec\.overrideRules\[1\]\.overriders\.plaintext\[0\]\.value: Invalid value: "1 Gi": quantities must match/,
    ],
  },
  {
    name: "the deprecated overriders' plaintext quantities are checked too",
    policy: cop({ overriders: { plaintext: [{ path: "/spec/template/spec/containers/0/resources/requests/memory", operator: "add", value: "128Mi\n" }] } }),
    want: [/^spec\.overriders\.plaintext\[0\]\.value: Invalid value: "128Mi\\n": quantities must match/],
  },
  {
    name: "valid quantities, numbers, removals and values at other paths are accepted at admission (the render checks the rest)",
    policy: op({
      resourceSelectors: deployment,
      overrideRules: [
        {
          overriders: {
            plaintext: [
              { path: "/spec/template/spec/containers/0/resources/requests/cpu", operator: "replace", value: "1.5" },
              { path: "/spec/template/spec/containers/0/resources/limits/memory", operator: "replace", value: "1Gi" },
              { path: "/spec/template/spec/containers/0/resources/limits/cpu", operator: "add", value: 2 },
              { path: "/spec/template/spec/containers/0/resources/requests/memory", operator: "remove" },
              { path: "/spec/template/spec/containers/0/resources", operator: "add", value: { requests: { cpu: "1Gi " } } },
              { path: "/spec/template/spec/containers/0/env/0/value", operator: "replace", value: "1Gi " },
              { path: "/spec/config/resources/requests/cpu", operator: "replace", value: "any text" },
            ],
          },
        },
      ],
    }),
    want: [],
  },
  {
    name: "an OverridePolicy's selector may not name another namespace",
    policy: op({ resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", namespace: "other" }] }),
    want: [/^spec\.resourceSelectors\[0\]\.namespace: .*namespace of resource selector must be the same as the namespace of the policy/],
  },
  {
    name: "a selector needs apiVersion and kind",
    policy: cop({ resourceSelectors: [{ name: "x" }] }),
    want: [/^spec\.resourceSelectors\[0\]\.apiVersion: Required/, /^spec\.resourceSelectors\[0\]\.kind: Required/],
  },
  {
    name: "an unknown field is refused",
    policy: op({ overrideRules: [{ overriders: { imageOverride: [] } }] }),
    want: [/^spec\.overrideRules\[0\]\.overriders\.imageOverride: unknown field/],
  },
  {
    name: "a ClusterOverridePolicy may not have a namespace",
    policy: { ...cop({}), metadata: { name: "x", namespace: "default" } },
    want: [/^metadata\.namespace: Forbidden/],
  },
];

for (const c of cases) {
  test(c.name, () => {
    const got = causes(c.policy);
    assert.equal(got.length, c.want.length, got.join("\n"));
    for (const w of c.want) assert.ok(got.some((g) => w.test(g)), `${w} not in\n${got.join("\n")}`);
  });
}

test("defaulting fills an OverridePolicy's selector namespaces with its own", () => {
  const o = applyDefaults(op({ resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }, { apiVersion: "v1", kind: "ConfigMap", namespace: "default" }] }), { now: new Date(0), uuid: () => "u" });
  assert.deepEqual(
    o.spec.resourceSelectors.map((r: Json) => r.namespace),
    ["default", "default"],
  );
});

test("a plaintext value of any JSON type survives decoding", () => {
  for (const value of [3, "s", true, { a: [1, { b: null }] }, [1, 2]]) {
    const o = decodeTyped(KARMADA.overridePolicy, op({ overrideRules: [{ overriders: { plaintext: [{ path: "/a", operator: "add", value }] } }] }));
    assert.deepEqual(o.spec.overrideRules[0].overriders.plaintext[0].value, value);
  }
});
