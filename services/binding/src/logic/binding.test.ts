import { test } from "node:test";
import assert from "node:assert/strict";
import { bindingName, jsonClean, type AnyPropagationPolicy, type AnyResourceBinding, type KubeObject } from "@flotilla/api";
import { TemplateDigestAnnotation, bindingChanged, bindingFollowsPolicy, bindingRefFor, buildBinding, foreignOwner, holdsForLazyPolicy, mergeBinding, mergeSuspension, templateDigest } from "./binding.js";

const nginx: KubeObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "nginx", namespace: "default", uid: "dep-uid", resourceVersion: "42", labels: { app: "nginx" } },
  spec: { replicas: 3, template: { spec: { containers: [{ name: "nginx", image: "nginx", resources: { requests: { cpu: "100m", memory: "128Mi" } } }] } } },
};
const placement = { clusterAffinity: { clusterNames: ["member1", "member2"] }, replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" } };
const pp: AnyPropagationPolicy = {
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { name: "nginx-propagation", namespace: "default", labels: { "propagationpolicy.karmada.io/permanent-id": "pp-id" } },
  spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }], placement, conflictResolution: "Abort", schedulerName: "default-scheduler", propagateDeps: true },
};

test("binding names are upstream's", () => {
  const cases: [string, string, string, string][] = [
    ["a Deployment", "Deployment", "nginx", "nginx-deployment"],
    ["upper case is lowered", "ConfigMap", "My-Config", "my-config-configmap"],
    ["a colon becomes a dot", "ClusterRole", "system:reader", "system.reader-clusterrole"],
  ];
  for (const [name, kind, n, want] of cases) assert.equal(bindingName(kind, n), want, name);
  assert.deepEqual(bindingRefFor(nginx), { gk: "work.karmada.io/ResourceBinding", namespace: "default", name: "nginx-deployment" }, "a namespaced template gets a ResourceBinding beside it");
  assert.deepEqual(bindingRefFor({ kind: "Namespace", metadata: { name: "web" } }), { gk: "work.karmada.io/ClusterResourceBinding", namespace: "", name: "web-namespace" }, "a cluster-scoped one a ClusterResourceBinding");
});

test("a PP builds the seed's ResourceBinding", () => {
  const b = buildBinding(nginx, pp);
  assert.equal(b.kind, "ResourceBinding");
  assert.equal(b.apiVersion, "work.karmada.io/v1alpha2");
  assert.deepEqual(b.metadata, {
    name: "nginx-deployment",
    namespace: "default",
    ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx", uid: "dep-uid", controller: true, blockOwnerDeletion: true }],
    finalizers: ["karmada.io/binding-controller"],
    labels: { "propagationpolicy.karmada.io/permanent-id": "pp-id" },
    annotations: { "propagationpolicy.karmada.io/namespace": "default", "propagationpolicy.karmada.io/name": "nginx-propagation", [TemplateDigestAnnotation]: templateDigest(nginx) },
  });
  assert.deepEqual(b.spec, {
    resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "nginx", uid: "dep-uid", resourceVersion: "42" },
    placement,
    propagateDeps: true,
    schedulerName: "default-scheduler",
    conflictResolution: "Abort",
    replicas: 3,
    replicaRequirements: { resourceRequest: { cpu: "100m", memory: "128Mi" } },
  });
});

test("a CPP builds a ClusterResourceBinding for a cluster-scoped template and a ResourceBinding for a namespaced one", () => {
  const cpp: AnyPropagationPolicy = {
    apiVersion: "policy.karmada.io/v1alpha1",
    kind: "ClusterPropagationPolicy",
    metadata: { name: "all", labels: { "clusterpropagationpolicy.karmada.io/permanent-id": "cpp-id" } },
    spec: { resourceSelectors: [], placement: {}, suspension: { dispatching: true } },
  };
  const role: KubeObject = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "reader", uid: "r-uid", resourceVersion: "7" }, rules: [] };
  const crb = buildBinding(role, cpp);
  assert.equal(crb.kind, "ClusterResourceBinding");
  assert.equal(crb.metadata.namespace, undefined);
  assert.deepEqual(crb.metadata.finalizers, ["karmada.io/cluster-resource-binding-controller"]);
  assert.deepEqual(crb.metadata.labels, { "clusterpropagationpolicy.karmada.io/permanent-id": "cpp-id" });
  assert.deepEqual(crb.spec?.resource, { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name: "reader", uid: "r-uid", resourceVersion: "7" });
  assert.equal(crb.spec?.replicas, undefined, "no replicas for a kind without a replica hook");
  assert.deepEqual(crb.spec?.suspension, { dispatching: true }, "the policy's suspension is copied");
  assert.equal(buildBinding(nginx, cpp).kind, "ResourceBinding");
});

test("updating a binding never touches what the scheduler, taint manager and eviction own", () => {
  const existing: AnyResourceBinding = jsonClean({
    ...buildBinding(nginx, pp),
    metadata: { ...buildBinding(nginx, pp).metadata, resourceVersion: "9", labels: { "resourcebinding.karmada.io/permanent-id": "rb-id", "propagationpolicy.karmada.io/permanent-id": "pp-id" }, annotations: { "policy.karmada.io/applied-placement": "{}" } },
    spec: {
      ...buildBinding(nginx, pp).spec,
      clusters: [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }],
      gracefulEvictionTasks: [{ fromCluster: "member3", purgeMode: "Gracefully", reason: "TaintUntolerated", producer: "TaintManager" }],
      requiredBy: [{ namespace: "default", name: "dep", clusters: [{ name: "member4" }] }],
      rescheduleTriggeredAt: "2024-01-01T00:00:00Z",
      suspension: { scheduling: true },
    },
    status: { schedulerObservedGeneration: 3 },
  });
  const newPlacement = { clusterAffinity: { clusterNames: ["member2"] } };
  const updated = mergeBinding(existing, buildBinding({ ...nginx, spec: { ...nginx.spec, replicas: 5 } }, { ...pp, spec: { ...pp.spec, placement: newPlacement, propagateDeps: false } }), pp);
  assert.deepEqual(updated.spec?.clusters, existing.spec?.clusters, "spec.clusters is kept");
  assert.deepEqual(updated.spec?.gracefulEvictionTasks, existing.spec?.gracefulEvictionTasks, "eviction tasks are kept");
  assert.deepEqual(updated.spec?.requiredBy, existing.spec?.requiredBy, "requiredBy is kept");
  assert.equal(updated.spec?.rescheduleTriggeredAt, "2024-01-01T00:00:00Z", "rescheduleTriggeredAt is kept");
  assert.deepEqual(updated.spec?.suspension, { scheduling: true }, "the binding's own scheduling suspension is kept");
  assert.deepEqual(updated.spec?.placement, newPlacement, "the placement follows the policy");
  assert.equal(updated.spec?.replicas, 5, "the replicas follow the template");
  assert.equal(updated.spec?.propagateDeps, undefined, "a field the policy cleared is cleared");
  assert.equal(updated.metadata.labels?.["resourcebinding.karmada.io/permanent-id"], "rb-id", "the binding's permanent id is kept");
  assert.equal(updated.metadata.annotations?.["policy.karmada.io/applied-placement"], "{}", "foreign annotations are kept");
  assert.equal(updated.metadata.resourceVersion, "9", "the write carries the resourceVersion read");
  assert.deepEqual(updated.status, existing.status);
  assert.ok(bindingChanged(existing, jsonClean(updated)));
});

test("a template write that only moved its resourceVersion does not rewrite the binding", () => {
  const b = jsonClean(buildBinding(nginx, pp));
  const again = jsonClean(buildBinding({ ...nginx, metadata: { ...nginx.metadata, resourceVersion: "43" } }, pp));
  assert.ok(!bindingChanged(b, again));
  assert.ok(bindingChanged(b, jsonClean(buildBinding({ ...nginx, spec: { ...nginx.spec, replicas: 4 } }, pp))));
});

test("suspension merges as MergePolicySuspension", () => {
  const cases: [string, Parameters<typeof mergeSuspension>[0], Parameters<typeof mergeSuspension>[1], ReturnType<typeof mergeSuspension>][] = [
    ["nothing anywhere stays nothing", undefined, undefined, undefined],
    ["the policy's dispatching is taken", undefined, { dispatching: true }, { dispatching: true }],
    ["the policy's replace the binding's, scheduling stays", { dispatching: true, scheduling: true }, { dispatchingOnClusters: { clusterNames: ["m1"] } }, { dispatchingOnClusters: { clusterNames: ["m1"] }, scheduling: true }],
    ["a policy without suspension clears dispatching but keeps scheduling", { dispatching: true, scheduling: false }, undefined, { scheduling: false }],
    ["a policy without suspension clears it all when scheduling is unset", { dispatching: true }, undefined, undefined],
  ];
  for (const [name, b, p, want] of cases) assert.deepEqual(mergeSuspension(b, p), want, name);
});

test("a binding controlled by another template (same name, new uid) is not taken over", () => {
  const b = buildBinding(nginx, pp);
  assert.equal(foreignOwner(b, nginx), undefined);
  assert.equal(foreignOwner(b, { ...nginx, metadata: { ...nginx.metadata, uid: "new-uid" } }), "dep-uid");
});

test("a policy change re-applies only the bindings that do not follow the policy yet", () => {
  const b = jsonClean(buildBinding(nginx, pp));
  assert.ok(bindingFollowsPolicy(b, pp), "a binding just built follows its policy");
  assert.ok(bindingFollowsPolicy({ ...b, spec: { ...b.spec, clusters: [{ name: "member1", replicas: 3 }], replicas: 7 } }, pp), "the scheduler's result and the template's replicas do not matter");
  const moved = { ...pp, spec: { ...pp.spec, placement: { clusterAffinity: { clusterNames: ["member3"] } } } };
  assert.ok(!bindingFollowsPolicy(b, moved), "a new placement");
  assert.ok(!bindingFollowsPolicy(b, { ...pp, spec: { ...pp.spec, suspension: { dispatching: true } } }), "a new suspension");
  assert.ok(!bindingFollowsPolicy(b, { ...pp, spec: { ...pp.spec, conflictResolution: "Overwrite" } }), "a new conflict resolution");
  assert.ok(!bindingFollowsPolicy(b, { ...pp, metadata: { ...pp.metadata, labels: { "propagationpolicy.karmada.io/permanent-id": "other" } } }), "another policy's claim");
});

test("templateDigest: the template's generation and own labels and annotations, not Karmada's bookkeeping, status or resourceVersion", () => {
  const base: KubeObject = { ...nginx, metadata: { ...nginx.metadata, generation: 2, annotations: { team: "a" } } };
  const d = templateDigest(base);
  const same: [string, KubeObject][] = [
    ["another resourceVersion", { ...base, metadata: { ...base.metadata, resourceVersion: "99" } }],
    ["a status", { ...base, status: { readyReplicas: 3 } } as KubeObject],
    ["Karmada's claim labels", { ...base, metadata: { ...base.metadata, labels: { ...base.metadata.labels, "propagationpolicy.karmada.io/permanent-id": "x" } } }],
    ["Karmada's annotations", { ...base, metadata: { ...base.metadata, annotations: { ...base.metadata.annotations, "propagationpolicy.karmada.io/name": "p" } } }],
    ["kubectl's last applied copy", { ...base, metadata: { ...base.metadata, annotations: { ...base.metadata.annotations, "kubectl.kubernetes.io/last-applied-configuration": "{}" } } }],
    ["label order", { ...base, metadata: { ...base.metadata, labels: { b: "2", app: "nginx" } } }],
  ];
  const withB: KubeObject = { ...base, metadata: { ...base.metadata, labels: { app: "nginx", b: "2" } } };
  assert.equal(templateDigest(same[5]![1]), templateDigest(withB), "label order");
  for (const [what, t] of same.slice(0, 5)) assert.equal(templateDigest(t), d, what);
  const changed: [string, KubeObject][] = [
    ["a spec change (generation)", { ...base, metadata: { ...base.metadata, generation: 3 } }],
    ["a label", { ...base, metadata: { ...base.metadata, labels: { app: "web" } } }],
    ["an annotation", { ...base, metadata: { ...base.metadata, annotations: { team: "b" } } }],
  ];
  for (const [what, t] of changed) assert.notEqual(templateDigest(t), d, what);
});

test("activationPreference Lazy: a policy change waits for the template's next change; a first claim or a changed template takes it at once", () => {
  const lazy: AnyPropagationPolicy = { ...pp, spec: { ...pp.spec!, activationPreference: "Lazy" } };
  const t1: KubeObject = { ...nginx, metadata: { ...nginx.metadata, generation: 1 } };
  const existing = { ...buildBinding(t1, lazy), spec: { ...buildBinding(t1, lazy).spec, clusters: [{ name: "member1", replicas: 3 }] } };
  const moved: AnyPropagationPolicy = { ...lazy, spec: { ...lazy.spec!, placement: { clusterAffinity: { clusterNames: ["member3"] } }, conflictResolution: "Overwrite" } };

  // the policy changed, the template did not: the binding keeps the old policy's fields (and the scheduler's)
  const held = mergeBinding(existing, buildBinding({ ...t1, metadata: { ...t1.metadata, resourceVersion: "43" } }, moved), moved);
  assert.equal(holdsForLazyPolicy(existing, buildBinding(t1, moved), moved), true);
  assert.deepEqual(held.spec?.placement, placement);
  assert.equal(held.spec?.conflictResolution, "Abort");
  assert.deepEqual(held.spec?.clusters, [{ name: "member1", replicas: 3 }]);
  assert.equal(held.spec?.resource?.resourceVersion, "43", "template-side fields still follow the template");
  assert.equal(bindingFollowsPolicy(existing, moved), true, "the policy controller does not wake it");

  // the template changed (a new generation): the new policy applies with it
  const t2: KubeObject = { ...t1, metadata: { ...t1.metadata, generation: 2 }, spec: { ...(t1.spec as object), replicas: 4 } } as KubeObject;
  const applied = mergeBinding(existing, buildBinding(t2, moved), moved);
  assert.deepEqual(applied.spec?.placement, moved.spec!.placement);
  assert.equal(applied.spec?.conflictResolution, "Overwrite");
  assert.equal(applied.spec?.replicas, 4);
  assert.equal(applied.metadata.annotations?.[TemplateDigestAnnotation], templateDigest(t2));

  // not Lazy, or a binding another policy claims, or one written before digests: at once
  assert.equal(holdsForLazyPolicy(existing, buildBinding(t1, { ...moved, spec: { ...moved.spec!, activationPreference: undefined } }), { ...moved, spec: { ...moved.spec!, activationPreference: undefined } }), false);
  const other: AnyPropagationPolicy = { ...moved, metadata: { ...moved.metadata, name: "other", labels: { "propagationpolicy.karmada.io/permanent-id": "other-id" } } };
  assert.equal(holdsForLazyPolicy(existing, buildBinding(t1, other), other), false);
  const undigested = structuredClone(existing);
  delete undigested.metadata.annotations![TemplateDigestAnnotation];
  assert.equal(holdsForLazyPolicy(undigested, buildBinding(t1, moved), moved), false);
});

test("the policy's move-back annotation follows it onto its bindings, and goes with it", () => {
  const MB = "failover.flotilla.io/move-back";
  const withMB: AnyPropagationPolicy = { ...pp, metadata: { ...pp.metadata, annotations: { [MB]: '{"stabilizationSeconds":60}' } } };
  const b = buildBinding(nginx, withMB);
  assert.equal(b.metadata.annotations?.[MB], '{"stabilizationSeconds":60}');
  assert.equal(bindingFollowsPolicy(b, withMB), true);
  assert.equal(bindingFollowsPolicy(b, pp), false, "the policy dropped it: the binding must follow");
  const existing = { ...b, metadata: { ...b.metadata, annotations: { ...b.metadata.annotations, "failover.flotilla.io/placement-before-failover": "[]" } } };
  const merged = mergeBinding(existing, buildBinding(nginx, pp), pp);
  assert.equal(merged.metadata.annotations?.[MB], undefined);
  assert.equal(merged.metadata.annotations?.["failover.flotilla.io/placement-before-failover"], "[]", "what other controllers wrote stays");
  assert.equal(bindingFollowsPolicy(merged, pp), true);
});
