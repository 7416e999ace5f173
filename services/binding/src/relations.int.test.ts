// Which bindings a dependency or an override policy concerns comes from the store (the index
// entries of the bindings' dependencies annotation and of the Works' applied-overrides
// annotations), so the replica that receives the wake-up finds them whether or not it rendered
// the binding: the mapping against Postgres, then a second replica that never saw the binding
// (the first stopped, no resync) serving a ConfigMap created late and a narrowed OverridePolicy.
import { test } from "node:test";
import assert from "node:assert/strict";
import { GK, kindKey, workName, type AnyResourceBinding, type KubeObject, type ResourceBinding, type Work } from "@flotilla/api";
import { eventually } from "@flotilla/testkit";
import { bindingsForDependency, bindingsForOverridePolicy } from "./controllers/relations.js";
import { RB, WORK, admit, nginxDeployment, nginxPropagation, schedule, setup } from "./int.test-support.js";

const cm = (name: string, namespace = "default") => ({ apiVersion: "v1", kind: "ConfigMap", namespace, name });
const rbKey = (name: string, namespace = "default") => kindKey({ gk: GK.resourceBinding, namespace, name });

/** A ResourceBinding as the distributor leaves it: its dependencies in the annotation. */
const boundWith = (name: string, deps: object[]): KubeObject =>
  admit({
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ResourceBinding",
    metadata: { name, namespace: "default", annotations: { "resourcebinding.karmada.io/dependencies": JSON.stringify(deps) } },
    spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: name.replace(/-deployment$/, "") } },
  });

/** A Work as the binding controller writes it, with the applied-overrides annotations given. */
const renderedWork = (cluster: string, binding: { namespace?: string; name: string }, annotations: Record<string, string>, template = "nginx"): KubeObject => ({
  apiVersion: "work.karmada.io/v1alpha1",
  kind: "Work",
  metadata: {
    name: workName(binding.namespace ?? "", template, "Deployment"),
    namespace: `karmada-es-${cluster}`,
    annotations: binding.namespace ? { "resourcebinding.karmada.io/namespace": binding.namespace, "resourcebinding.karmada.io/name": binding.name, ...annotations } : { "clusterresourcebinding.karmada.io/name": binding.name, ...annotations },
  },
  spec: { workload: { manifests: [{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: template, ...(binding.namespace ? { namespace: binding.namespace } : {}) } }] } },
});
const applied = (...names: string[]) => JSON.stringify(names.map((policyName) => ({ policyName, overriders: {} })));

test("a dependency maps to the bindings whose dependencies annotation lists it, read from the store; dropped from the annotation, it no longer does", async () => {
  const env = await setup({ run: {} });
  try {
    await env.store.create(boundWith("a-deployment", [cm("shared"), cm("only-a"), { apiVersion: "v1", kind: "Secret", namespace: "default", name: "tls" }]));
    await env.store.create(boundWith("b-deployment", [cm("shared")]));
    const sorted = async (o: ReturnType<typeof cm>) => (await bindingsForDependency(env.store, o)).sort();
    assert.deepEqual(await sorted(cm("shared")), [rbKey("a-deployment"), rbKey("b-deployment")]);
    assert.deepEqual(await sorted(cm("only-a")), [rbKey("a-deployment")]);
    assert.deepEqual(await sorted({ ...cm("only-a"), kind: "Secret" }), [], "another kind of the same name is another dependency");
    assert.deepEqual(await sorted({ apiVersion: "v1", kind: "Secret", namespace: "default", name: "tls" }), [rbKey("a-deployment")]);
    assert.deepEqual(await sorted(cm("shared", "other")), [], "another namespace");
    assert.deepEqual(await sorted({ ...cm("shared"), kind: "Service" }), [], "a Service is never a dependency");

    await env.store.mutate<KubeObject>({ gk: RB, namespace: "default", name: "a-deployment" }, (cur) => ({
      ...cur,
      metadata: { ...cur.metadata, annotations: { "resourcebinding.karmada.io/dependencies": JSON.stringify([cm("shared")]) } },
    }));
    assert.deepEqual(await sorted(cm("only-a")), []);
    assert.deepEqual(await sorted(cm("shared")), [rbKey("a-deployment"), rbKey("b-deployment")]);
  } finally {
    await env.close();
  }
});

test("an override policy maps to the bindings whose Works were rendered with it, whatever its selectors say now, plus those its selectors may pick and those it stalled", async () => {
  const env = await setup({ run: {} });
  try {
    const web = { namespace: "default", name: "web-deployment" };
    const api = { namespace: "default", name: "api-deployment" };
    const other = { namespace: "other", name: "web-deployment" };
    await env.store.create(renderedWork("member1", web, { "policy.karmada.io/applied-overrides": applied("registry"), "policy.karmada.io/applied-cluster-overrides": applied("mirror") }, "web"));
    await env.store.create(renderedWork("member2", api, { "policy.karmada.io/applied-overrides": applied("tag") }, "api"));
    await env.store.create(renderedWork("member1", other, { "policy.karmada.io/applied-overrides": applied("registry") }, "web"));
    await env.store.create(renderedWork("member1", { name: "admin-clusterrole" }, { "policy.karmada.io/applied-cluster-overrides": applied("mirror") }, "admin"));
    // the policies now pick nothing these bindings hold (a narrowed selector)
    const narrowed = (kind: string, name: string, namespace?: string) =>
      admit<KubeObject>({ apiVersion: "policy.karmada.io/v1alpha1", kind, metadata: { name, ...(namespace ? { namespace } : {}) }, spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nothing" }] } });
    await env.store.create(narrowed("OverridePolicy", "registry", "default"));
    await env.store.create(narrowed("ClusterOverridePolicy", "mirror"));

    const map = async (gk: string, name: string, namespace = "") => (await bindingsForOverridePolicy(env.store, gk, namespace, name)).sort();
    assert.deepEqual(await map(GK.overridePolicy, "registry", "default"), [rbKey("web-deployment")], "an OverridePolicy concerns its own namespace's templates only");
    assert.deepEqual(await map(GK.overridePolicy, "registry", "other"), [rbKey("web-deployment", "other")], "one that is gone: the bindings rendered with it (and any binding of its namespace: none here)");
    assert.deepEqual(await map(GK.clusterOverridePolicy, "mirror"), [kindKey({ gk: GK.clusterResourceBinding, namespace: "", name: "admin-clusterrole" }), rbKey("web-deployment")].sort());

    // a binding its selectors may pick, and one it stalled, are concerned too
    const binding = (name: string, status?: object) =>
      admit<KubeObject>({ apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", metadata: { name: `${name}-deployment`, namespace: "default" }, spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name } }, ...(status ? { status } : {}) });
    await env.store.create(binding("nothing"));
    await env.store.create(binding("db"));
    await env.store.create(binding("stuck"));
    await env.store.mutate<AnyResourceBinding>({ gk: RB, namespace: "default", name: "stuck-deployment" }, (cur) => ({ ...cur, status: { conditions: [{ type: "Stalled", status: "True", reason: "ApplyOverridePolicyFailed", message: "x", lastTransitionTime: "2024-01-01T00:00:00Z" }] } }), { status: true });
    assert.deepEqual(await map(GK.overridePolicy, "registry", "default"), [rbKey("nothing-deployment"), rbKey("stuck-deployment"), rbKey("web-deployment")]);
    assert.ok(!(await map(GK.overridePolicy, "registry", "default")).includes(rbKey("db-deployment")));
  } finally {
    await env.close();
  }
});

const NGINX_RB = { gk: RB, namespace: "default", name: "nginx-deployment" };

test("a second replica that never rendered the binding attaches a ConfigMap created after its Deployment, and restores the Works of a narrowed OverridePolicy (no resync)", async () => {
  const env = await setup();
  try {
    const depPolicy = nginxPropagation();
    depPolicy.spec.propagateDeps = true;
    const d = nginxDeployment();
    d.spec.template.spec.volumes = [{ name: "conf", configMap: { name: "nginx-conf" } }];
    await env.store.create(admit(depPolicy));
    await env.store.create(d);
    await env.store.create(
      admit<KubeObject>({
        apiVersion: "policy.karmada.io/v1alpha1",
        kind: "OverridePolicy",
        metadata: { name: "team", namespace: "default" },
        spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }], overrideRules: [{ overriders: { labelsOverrider: [{ operator: "add", value: { team: "web" } }] } }] },
      }),
    );
    await eventually(() => env.store.get(NGINX_RB), { message: "binding created" });
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 3 }]);
    const nginxWork = { gk: WORK, namespace: "karmada-es-member1", name: workName("default", "nginx", "Deployment") };
    const team = async () => ((await env.store.get<Work>(nginxWork))?.spec?.workload?.manifests?.[0] as KubeObject | undefined)?.metadata.labels?.team;
    await eventually(async () => (await team()) === "web", { message: "the Work rendered with the OverridePolicy" });
    await eventually(async () => (await env.store.get<ResourceBinding>(NGINX_RB))?.metadata.annotations?.["resourcebinding.karmada.io/dependencies"]?.includes("nginx-conf"), { message: "the binding lists its dependency" });

    // the replica that rendered it goes; another, with nothing in memory, receives what follows
    await env.app.stop();
    await env.startApp();

    await env.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "nginx-conf", namespace: "default" }, data: { a: "b" } } as KubeObject);
    const cmWork = { gk: WORK, namespace: "karmada-es-member1", name: workName("default", "nginx-conf", "ConfigMap") };
    await eventually(() => env.store.get<Work>(cmWork), { timeoutMs: 5_000, message: "the ConfigMap created late reaches nginx's cluster" });

    await env.store.mutate<KubeObject>({ gk: "policy.karmada.io/OverridePolicy", namespace: "default", name: "team" }, (cur) => ({ ...cur, spec: { ...cur.spec, resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "other" }] } }));
    await eventually(async () => (await team()) === undefined, { timeoutMs: 5_000, message: "the narrowed policy's label gone from the Work" });
  } finally {
    await env.close();
  }
});
