import { test } from "node:test";
import assert from "node:assert/strict";
import type { AnyPropagationPolicy, KubeObject, ResourceSelector } from "@flotilla/api";
import { ImplicitPriority, pickPolicyForTemplate, selectorPriority } from "./selectors.js";

const deploy = (name = "nginx", ns = "default", labels: Record<string, string> = { app: "nginx" }): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: ns, labels },
});

const pp = (name: string, selectors: ResourceSelector[], o: { priority?: number; ns?: string; deleting?: boolean } = {}): AnyPropagationPolicy => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { name, namespace: o.ns ?? "default", ...(o.deleting ? { deletionTimestamp: "2024-01-01T00:00:00Z" } : {}) },
  spec: { resourceSelectors: selectors, ...(o.priority !== undefined ? { priority: o.priority } : {}) },
});
const cpp = (name: string, selectors: ResourceSelector[], priority?: number): AnyPropagationPolicy => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "ClusterPropagationPolicy",
  metadata: { name },
  spec: { resourceSelectors: selectors, ...(priority !== undefined ? { priority } : {}) },
});

const byKind: ResourceSelector = { apiVersion: "apps/v1", kind: "Deployment" };
const byName: ResourceSelector = { apiVersion: "apps/v1", kind: "Deployment", name: "nginx" };
const byLabel: ResourceSelector = { apiVersion: "apps/v1", kind: "Deployment", labelSelector: { matchLabels: { app: "nginx" } } };

test("selector priority: name beats label selector beats kind only; any mismatch is 0", () => {
  const cases: [string, ResourceSelector, number][] = [
    ["a name match is the most specific", byName, ImplicitPriority.MatchName],
    ["a label selector match comes next", byLabel, ImplicitPriority.MatchLabelSelector],
    ["kind alone matches everything of the kind", byKind, ImplicitPriority.MatchAll],
    ["a name decides alone, even with a label selector that would not match", { ...byName, labelSelector: { matchLabels: { app: "other" } } }, ImplicitPriority.MatchName],
    ["another name does not match", { ...byName, name: "web" }, ImplicitPriority.MisMatch],
    ["a label selector that does not match", { ...byLabel, labelSelector: { matchLabels: { app: "web" } } }, ImplicitPriority.MisMatch],
    ["the apiVersion must be equal", { ...byKind, apiVersion: "apps/v1beta1" }, ImplicitPriority.MisMatch],
    ["the kind must be equal", { ...byKind, kind: "StatefulSet" }, ImplicitPriority.MisMatch],
    ["a selector namespace must be the template's", { ...byKind, namespace: "other" }, ImplicitPriority.MisMatch],
    ["a selector namespace equal to the template's matches", { ...byKind, namespace: "default" }, ImplicitPriority.MatchAll],
    ["a malformed label selector matches nothing", { ...byKind, labelSelector: { matchExpressions: [{ key: "app", operator: "Bogus", values: [] }] } }, ImplicitPriority.MisMatch],
  ];
  for (const [name, rs, want] of cases) assert.equal(selectorPriority(deploy(), rs), want, name);
});

test("policy precedence", () => {
  const cases: { name: string; pps: AnyPropagationPolicy[]; cpps: AnyPropagationPolicy[]; template?: KubeObject; want: string | undefined }[] = [
    { name: "a PP in the template's namespace beats any CPP, even of higher priority and more specific", pps: [pp("pp", [byKind])], cpps: [cpp("cpp", [byName], 100)], want: "PropagationPolicy/pp" },
    { name: "a PP of another namespace is not considered, so the CPP claims", pps: [pp("pp", [byKind], { ns: "other" })], cpps: [cpp("cpp", [byKind])], want: "ClusterPropagationPolicy/cpp" },
    { name: "the higher explicit priority wins over a more specific selector", pps: [pp("a", [byName], { priority: 1 }), pp("b", [byKind], { priority: 2 })], cpps: [], want: "PropagationPolicy/b" },
    { name: "at equal priority the name selector beats the label selector", pps: [pp("a", [byLabel]), pp("b", [byName])], cpps: [], want: "PropagationPolicy/b" },
    { name: "at equal priority the label selector beats kind only", pps: [pp("a", [byKind]), pp("b", [byLabel])], cpps: [], want: "PropagationPolicy/b" },
    { name: "everything equal, the smaller name wins", pps: [pp("zeta", [byKind]), pp("alpha", [byKind])], cpps: [], want: "PropagationPolicy/alpha" },
    { name: "names compare as bytes (upper case sorts first)", pps: [pp("b", [byKind]), pp("B", [byKind])], cpps: [], want: "PropagationPolicy/B" },
    { name: "a policy's implicit priority is its best selector", pps: [pp("a", [byKind, byName]), pp("b", [byLabel])], cpps: [], want: "PropagationPolicy/a" },
    { name: "a policy being deleted is skipped", pps: [pp("a", [byName], { deleting: true }), pp("b", [byKind])], cpps: [], want: "PropagationPolicy/b" },
    { name: "a negative priority ranks below the default", pps: [pp("a", [byName], { priority: -1 }), pp("b", [byKind])], cpps: [], want: "PropagationPolicy/b" },
    { name: "among CPPs the same order applies", pps: [], cpps: [cpp("b", [byKind], 5), cpp("a", [byKind], 5), cpp("c", [byName], 1)], want: "ClusterPropagationPolicy/a" },
    { name: "nothing matches: no policy", pps: [pp("a", [{ ...byKind, kind: "StatefulSet" }])], cpps: [cpp("c", [{ ...byName, name: "web" }])], want: undefined },
    {
      name: "a cluster-scoped template is claimed only by a CPP",
      template: { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "reader" } },
      pps: [pp("a", [{ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole" }])],
      cpps: [cpp("c", [{ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name: "reader" }])],
      want: "ClusterPropagationPolicy/c",
    },
  ];
  for (const c of cases) {
    const got = pickPolicyForTemplate(c.template ?? deploy(), c.pps, c.cpps);
    assert.equal(got ? `${got.kind}/${got.metadata.name}` : undefined, c.want, c.name);
  }
});
