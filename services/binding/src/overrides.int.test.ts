import { test } from "node:test";
import assert from "node:assert/strict";
import type { AnyResourceBinding, KubeObject, Work } from "@flotilla/api";
import type { ObjectStore } from "@flotilla/store";
import { eventually } from "@flotilla/testkit";
import { RB, WORK, admit, nginxDeployment, nginxPropagation, schedule, setup } from "./int.test-support.js";

const OP = "policy.karmada.io/OverridePolicy";
const NGINX_RB = { gk: RB, namespace: "default", name: "nginx-deployment" };
const work = (cluster: string) => ({ gk: WORK, namespace: `karmada-es-${cluster}`, name: "nginx-687f7fb96f" });
const manifest = (w: Work | undefined) => w?.spec?.workload?.manifests?.[0] as KubeObject | undefined;
const image = (w: Work | undefined) => manifest(w)?.spec?.template?.spec?.containers?.[0]?.image as string | undefined;
const team = (w: Work | undefined) => manifest(w)?.metadata.labels?.team;

const cluster = (name: string, labels: Record<string, string>): KubeObject => ({
  apiVersion: "cluster.karmada.io/v1alpha1",
  kind: "Cluster",
  metadata: { name, labels },
  spec: { syncMode: "Push", apiEndpoint: `https://${name}.example:6443` },
});

/** The OverridePolicy: a tag for the clusters labelled env=prod, a label for every cluster. */
const overridePolicy = (tag: string, env: string): KubeObject => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "OverridePolicy",
  metadata: { name: "nginx-override", namespace: "default" },
  spec: {
    resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }],
    overrideRules: [
      { targetCluster: { labelSelector: { matchLabels: { env } } }, overriders: { imageOverrider: [{ component: "Tag", operator: "replace", value: tag }] } },
      { overriders: { labelsOverrider: [{ operator: "add", value: { team: "web" } }] } },
    ],
  },
});

async function works(env: { store: ObjectStore }): Promise<[Work | undefined, Work | undefined]> {
  return Promise.all([env.store.get<Work>(work("member1")), env.store.get<Work>(work("member2"))]);
}

test("an OverridePolicy changes the image for one cluster and adds a label for both; Works follow its edits, a rule that cannot apply stalls the binding and keeps the Works", async () => {
  const env = await setup();
  try {
    await env.store.create(admit(cluster("member1", { env: "prod" })));
    await env.store.create(admit(cluster("member2", { env: "staging" })));
    await env.store.create(admit(nginxPropagation()));
    await env.store.create(nginxDeployment());
    await eventually(() => env.store.get(NGINX_RB), { message: "binding created" });
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]);
    await eventually(async () => ((await works(env)).every((w) => image(w) === "nginx:1.25") ? true : undefined), { message: "works written without overrides" });

    // the policy arrives after the Works: they are rendered again
    await env.store.create(admit(overridePolicy("1.26", "prod")));
    const [w1, w2] = await eventually(
      async () => {
        const ws = await works(env);
        return image(ws[0]) === "nginx:1.26" && team(ws[0]) === "web" && team(ws[1]) === "web" ? ws : undefined;
      },
      { message: "works carry the overrides" },
    );
    assert.equal(image(w2), "nginx:1.25", "member2 is not env=prod");
    assert.equal(manifest(w1)?.spec?.replicas, 1, "the cluster's replicas are kept");
    assert.equal(manifest(w2)?.spec?.replicas, 2);
    assert.deepEqual(JSON.parse(w1!.metadata.annotations!["policy.karmada.io/applied-overrides"]!), [
      {
        policyName: "nginx-override",
        overriders: { imageOverrider: [{ component: "Tag", operator: "replace", value: "1.26" }] },
      },
      { policyName: "nginx-override", overriders: { labelsOverrider: [{ operator: "add", value: { team: "web" } }] } },
    ]);
    assert.deepEqual(JSON.parse(w2!.metadata.annotations!["policy.karmada.io/applied-overrides"]!), [{ policyName: "nginx-override", overriders: { labelsOverrider: [{ operator: "add", value: { team: "web" } }] } }]);
    assert.equal(w1!.metadata.annotations?.["policy.karmada.io/applied-cluster-overrides"], undefined);
    assert.equal(manifest(w1)?.metadata.annotations?.["policy.karmada.io/applied-overrides"], undefined, "the record is on the Work, not the manifest");

    // the policy is edited: another tag, now for the staging cluster; member1 goes back to the template's image
    await env.store.mutate<KubeObject>({ gk: OP, namespace: "default", name: "nginx-override" }, (cur) => ({ ...cur, spec: overridePolicy("1.27", "staging").spec }));
    await eventually(
      async () => {
        const ws = await works(env);
        return image(ws[0]) === "nginx:1.25" && image(ws[1]) === "nginx:1.27" && team(ws[0]) === "web" && team(ws[1]) === "web" ? true : undefined;
      },
      { message: "works follow the edited policy" },
    );

    // an edit that cannot apply on member2 (replace of a missing path): member2's Work is left as it was, member1's is written, the binding says why
    const bad = overridePolicy("1.28", "staging");
    bad.spec.overrideRules[0].overriders.plaintext = [{ path: "/spec/missing", operator: "replace", value: 1 }];
    bad.spec.overrideRules[1].overriders.labelsOverrider[0].value = { team: "api" };
    await env.store.mutate<KubeObject>({ gk: OP, namespace: "default", name: "nginx-override" }, (cur) => ({ ...cur, spec: bad.spec }));
    const stalled = await eventually(
      async () => {
        const rb = await env.store.get<AnyResourceBinding>(NGINX_RB);
        return rb?.status?.conditions?.find((c) => c.type === "Stalled" && c.reason === "ApplyOverridePolicyFailed");
      },
      { message: "binding stalled" },
    );
    assert.match(stalled.message ?? "", /cluster\(member2\): failed to apply override policy\(nginx-override\): replace operation does not apply: doc is missing key: \/spec\/missing/);
    const [k1, k2] = await eventually(async () => {
      const ws = await works(env);
      return team(ws[0]) === "api" ? ws : undefined;
    });
    assert.equal(image(k2), "nginx:1.27", "member2's Work is untouched");
    assert.equal(team(k2), "web");
    assert.equal(image(k1), "nginx:1.25");
    // the events are recorded after the status is written: wait for them
    const hasEvent = async (reason: string, kind: string) =>
      (await env.store.list<KubeObject>("/Event", { namespace: "default" })).items.some((e) => e.reason === reason && (e.involvedObject as { kind: string }).kind === kind);
    await eventually(() => hasEvent("ApplyOverridePolicyFailed", "Deployment"), { message: "a Warning Event on the template" });
    await eventually(() => hasEvent("SyncWorkFailed", "ResourceBinding"), { message: "a Warning Event on the binding" });

    // fixed: every Work renders and the condition goes
    await env.store.mutate<KubeObject>({ gk: OP, namespace: "default", name: "nginx-override" }, (cur) => ({ ...cur, spec: overridePolicy("1.28", "staging").spec }));
    await eventually(
      async () => {
        const ws = await works(env);
        const rb = await env.store.get<AnyResourceBinding>(NGINX_RB);
        return image(ws[1]) === "nginx:1.28" && team(ws[0]) === "web" && !rb?.status?.conditions?.some((c) => c.type === "Stalled") ? true : undefined;
      },
      { message: "works render again and the binding is no longer stalled" },
    );

    // the policy stops selecting the Deployment: the Works lose its overrides
    const other = overridePolicy("1.28", "staging");
    other.spec.resourceSelectors = [{ apiVersion: "apps/v1", kind: "Deployment", name: "other" }];
    await env.store.mutate<KubeObject>({ gk: OP, namespace: "default", name: "nginx-override" }, (cur) => ({ ...cur, spec: other.spec }));
    await eventually(
      async () => {
        const ws = await works(env);
        return ws.every((w) => image(w) === "nginx:1.25" && team(w) === undefined) ? true : undefined;
      },
      { message: "works back to the template once the policy selects something else" },
    );
    await env.store.mutate<KubeObject>({ gk: OP, namespace: "default", name: "nginx-override" }, (cur) => ({ ...cur, spec: overridePolicy("1.28", "staging").spec }));
    await eventually(async () => ((await works(env)).every((w) => team(w) === "web") ? true : undefined), { message: "selected again" });

    // the policy is deleted: the Works lose its overrides
    await env.store.delete({ gk: OP, namespace: "default", name: "nginx-override" });
    await eventually(
      async () => {
        const ws = await works(env);
        return ws.every((w) => image(w) === "nginx:1.25" && team(w) === undefined) ? true : undefined;
      },
      { message: "works back to the template" },
    );
  } finally {
    await env.close();
  }
});

test("dependentOverrides: a policy is applied to a template only once the OverridePolicies it names exist", async () => {
  const env = await setup();
  try {
    const pp = nginxPropagation();
    pp.spec.dependentOverrides = ["nginx-override"];
    await env.store.create(admit(pp));
    await env.store.create(nginxDeployment());
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(await env.store.get(NGINX_RB), undefined, "no binding while the override policy is missing");
    const t = await env.store.get<KubeObject>({ gk: "apps/Deployment", namespace: "default", name: "nginx" });
    assert.equal(t?.metadata.labels?.["propagationpolicy.karmada.io/permanent-id"], undefined, "the template is not claimed either");

    await env.store.create(admit(overridePolicy("1.26", "prod")));
    await eventually(() => env.store.get(NGINX_RB), { message: "binding created once the override policy exists" });
  } finally {
    await env.close();
  }
});

test("an override that writes a quantity Kubernetes refuses stalls the binding naming the cluster, the policy and the field; no Work carries the manifest", async () => {
  const env = await setup();
  const CPU = "/spec/template/spec/containers/0/resources/requests/cpu";
  const cpu = (w: Work | undefined) => manifest(w)?.spec?.template?.spec?.containers?.[0]?.resources?.requests?.cpu as unknown;
  const policy = (member1: Record<string, unknown>): KubeObject => ({
    apiVersion: "policy.karmada.io/v1alpha1",
    kind: "OverridePolicy",
    metadata: { name: "resources", namespace: "default" },
    spec: {
      resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }],
      overrideRules: [
        { targetCluster: { clusterNames: ["member1"] }, overriders: { plaintext: [member1] } },
        { overriders: { labelsOverrider: [{ operator: "add", value: { team: "web" } }] } },
      ],
    },
  });
  const stalledSaying = (re: RegExp) =>
    eventually(
      async () => {
        const c = (await env.store.get<AnyResourceBinding>(NGINX_RB))?.status?.conditions?.find((x) => x.type === "Stalled" && x.reason === "ApplyOverridePolicyFailed");
        return c && re.test(c.message ?? "") ? c : undefined;
      },
      { message: `binding stalled saying ${re}` },
    );
  const allManifests = async () => (await env.store.list<Work>(WORK)).items.flatMap((w) => w.spec?.workload?.manifests ?? []);
  try {
    await env.store.create(admit(cluster("member1", { env: "prod" })));
    await env.store.create(admit(cluster("member2", { env: "staging" })));
    await env.store.create(admit(nginxPropagation()));
    // stored as it is (a policy written before admission refused such a value, or straight to the store)
    await env.store.create(admit(policy({ path: CPU, operator: "replace", value: "1Gi " })));
    await env.store.create(nginxDeployment());
    await eventually(() => env.store.get(NGINX_RB), { message: "binding created" });
    await schedule(env.store, NGINX_RB, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]);

    const c = await stalledSaying(/requests\[cpu\]/);
    assert.match(
      c.message ?? "",
      /^failed to apply overrides to Deployment default\/nginx: cluster\(member1\): failed to apply override policy\(resources\): the overridden Deployment is invalid: spec\.template\.spec\.containers\[0\]\.resources\.requests\[cpu\]: Invalid value: "1Gi ": quantities must match the regular expression/,
    );
    assert.doesNotMatch(c.message ?? "", /member2/, "member2's manifest is valid");
    // the Works are written before the condition: member2's is there, member1's was never created
    const [w1, w2] = await works(env);
    assert.equal(w1, undefined, "no Work for member1 with the invalid manifest");
    assert.equal(team(w2), "web", "member2's Work carries the policy's other rule");
    assert.equal(cpu(w2), "100m");
    assert.ok(!JSON.stringify(await allManifests()).includes("1Gi "), "no Work anywhere carries the bad quantity");

    // fixed: member1's Work is written and the condition goes
    await env.store.mutate<KubeObject>({ gk: OP, namespace: "default", name: "resources" }, (cur) => ({ ...cur, spec: policy({ path: CPU, operator: "replace", value: "1" }).spec }));
    const good = await eventually(
      async () => {
        const [k1] = await works(env);
        const rb = await env.store.get<AnyResourceBinding>(NGINX_RB);
        return cpu(k1) === "1" && !rb?.status?.conditions?.some((x) => x.type === "Stalled") ? k1 : undefined;
      },
      { message: "member1's Work written once the policy is fixed, and the binding no longer stalled" },
    );

    // a form admission cannot judge from the policy alone (a whole resources object): the render refuses it and member1's Work stays as it was
    await env.store.mutate<KubeObject>({ gk: OP, namespace: "default", name: "resources" }, (cur) => ({
      ...cur,
      spec: policy({ path: "/spec/template/spec/containers/0/resources", operator: "add", value: { requests: { cpu: "1" }, limits: { memory: "64Mi " } } }).spec,
    }));
    const c2 = await stalledSaying(/limits\[memory\]/);
    assert.match(c2.message ?? "", /cluster\(member1\): failed to apply override policy\(resources\): the overridden Deployment is invalid: spec\.template\.spec\.containers\[0\]\.resources\.limits\[memory\]: Invalid value: "64Mi "/);
    assert.deepEqual((await works(env))[0], good, "member1's Work is exactly as it was");
    assert.ok(!JSON.stringify(await allManifests()).includes("64Mi "), "no Work anywhere carries the bad quantity");
  } finally {
    await env.close();
  }
});
