import { test } from "node:test";
import assert from "node:assert/strict";
import { workName, type AnyResourceBinding, type Condition, type KubeObject, type Work } from "@flotilla/api";
import { METRICS } from "@flotilla/runtime";
import { listEventsFor } from "@flotilla/store";
import { eventually } from "@flotilla/testkit";
import { bindingControllerName } from "./controllers/binding.js";
import { detectorName } from "./controllers/detector.js";
import { RB, WORK, admit, nginxDeployment, nginxPropagation, schedule, setup, sleep, type Env } from "./int.test-support.js";

const DEPLOY = "apps/Deployment";
const CPU_FIELD = "spec.template.spec.containers[0].resources.requests[cpu]";

/** A Deployment whose container asks for `cpu` as given: what only a write that bypasses the gateway can store. */
function deployment(name: string, cpu: unknown, replicas = 2): KubeObject {
  const d = nginxDeployment({ name, replicas });
  d.spec.template.spec.containers[0].resources.requests = { cpu, memory: "64Mi" };
  return d;
}

/** A policy that propagates every Deployment of the namespace. */
function allDeployments(): KubeObject {
  const p = nginxPropagation({ name: "all-deployments" });
  p.spec.resourceSelectors = [{ apiVersion: "apps/v1", kind: "Deployment" }];
  return p;
}

const rbRef = (name: string) => ({ gk: RB, namespace: "default", name: `${name}-deployment` });
const deployRef = (name: string) => ({ gk: DEPLOY, namespace: "default", name });
const stalledOf = (o: KubeObject | undefined): Condition | undefined => ((o?.status?.conditions ?? []) as Condition[]).find((c) => c.type === "Stalled");
const cpuOfWork = (w: Work | undefined) => ((w?.spec?.workload?.manifests?.[0] as KubeObject | undefined)?.spec?.template?.spec?.containers?.[0]?.resources?.requests as Record<string, unknown> | undefined)?.cpu;
const replicasOfWork = (w: Work | undefined) => (w?.spec?.workload?.manifests?.[0] as KubeObject | undefined)?.spec?.replicas;

async function metric(env: Env, name: string, controller: string, extra = ""): Promise<number> {
  const text = (await env.app.http.inject({ method: "GET", url: "/metrics" })).body;
  const line = text.split("\n").find((l) => l.startsWith(`${name}{controller="${controller}"${extra}} `));
  return Number(line?.split(" ")[1] ?? NaN);
}

test("a poison Deployment stored without the gateway gets Stalled and an ApplyPolicyFailed Event, is not retried, and slows no other Deployment; fixed, it gets its binding", async () => {
  const env = await setup();
  try {
    await env.store.create(admit(allDeployments()));
    const poison = { "cpu-true": true, "cpu-list": [], "cpu-object": {} } as const;
    const good = Array.from({ length: 20 }, (_, i) => `good-${i}`);
    const t0 = Date.now();
    // the poison ones among the good ones: at the start, in the middle, near the end
    for (const [i, name] of good.entries()) {
      const p = i % 7 === 0 ? Object.entries(poison)[i / 7] : undefined;
      if (p) await env.store.create(deployment(p[0], p[1]));
      await env.store.create(deployment(name, "100m"));
    }

    // every good Deployment gets its binding, with its requirements, promptly
    await eventually(async () => (await Promise.all(good.map((n) => env.store.get<AnyResourceBinding>(rbRef(n))))).every((rb) => rb?.spec?.replicaRequirements?.resourceRequest?.cpu === "100m"), {
      timeoutMs: 10_000,
      message: "every good Deployment has its binding",
    });
    const allBound = Date.now() - t0;
    assert.ok(allBound < 10_000, `bindings took ${allBound} ms`);

    // each poison gets the terminal condition and a Warning Event, and no binding
    for (const name of Object.keys(poison)) {
      const t = await eventually(async () => {
        const o = await env.store.get(deployRef(name));
        return stalledOf(o) ? o : undefined;
      }, { message: `${name} has Stalled` });
      const c = stalledOf(t)!;
      assert.equal(c.status, "True");
      assert.equal(c.reason, "InvalidTemplate");
      assert.ok(c.message?.includes(`${CPU_FIELD}: Invalid value:`), c.message);
      assert.ok(c.message?.startsWith(`Deployment.apps "${name}" is invalid: `), c.message);
      const events = await eventually(async () => {
        const es = await listEventsFor(env.store, t);
        return es.some((e) => e.reason === "ApplyPolicyFailed") ? es : undefined;
      });
      const ev = events.find((e) => e.reason === "ApplyPolicyFailed")!;
      assert.equal(ev.type, "Warning");
      assert.equal(ev.source.component, detectorName);
      assert.ok(ev.message.startsWith("Apply policy(default/all-deployments) failed: "), ev.message);
      assert.ok(ev.message.includes(CPU_FIELD), ev.message);
      assert.equal(await env.store.get(rbRef(name)), undefined, "no binding is built from it");
      assert.equal(env.app.detector.terminalFailure(`${DEPLOY}|default|${name}`)?.version !== undefined, true, "parked on the version it failed on");
    }
    assert.equal(await metric(env, METRICS.terminalKeys, detectorName), 3);
    assert.ok((await metric(env, METRICS.reconcileErrors, detectorName, ',reason="terminal"')) >= 3);

    // parked: nothing retries it while it does not change
    const before = env.app.detector.snapshot().metrics.reconciles.error;
    const applyFailed = async () => (await listEventsFor(env.store, { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "cpu-true" })).find((e) => e.reason === "ApplyPolicyFailed")?.count;
    const eventsBefore = await applyFailed();
    await sleep(1000);
    assert.equal(env.app.detector.snapshot().metrics.reconciles.error, before, "no retries");
    assert.equal(await applyFailed(), eventsBefore, "no new Event");
    assert.equal(env.app.detector.snapshot().backoffKeys, 0);

    // fixed: the change wakes it, the binding is built and the condition goes
    await env.store.mutate<KubeObject>(deployRef("cpu-true"), (cur) => {
      cur.spec.template.spec.containers[0].resources.requests.cpu = "250m";
      return cur;
    });
    const rb = await eventually(() => env.store.get<AnyResourceBinding>(rbRef("cpu-true")), { message: "the fixed Deployment has its binding" });
    assert.equal(rb.spec?.replicaRequirements?.resourceRequest?.cpu, "250m");
    await eventually(async () => !stalledOf(await env.store.get(deployRef("cpu-true"))), { message: "Stalled removed" });
    assert.equal(env.app.detector.terminalFailure(`${DEPLOY}|default|cpu-true`), undefined);
    assert.equal(await metric(env, METRICS.terminalKeys, detectorName), 2);
  } finally {
    await env.close();
  }
});

test("a Deployment that turns poison after it was propagated: its binding gets Stalled and SyncWorkFailed, its Works stay as they were; fixed, both follow", async () => {
  const env = await setup();
  try {
    await env.store.create(admit(nginxPropagation()));
    await env.store.create(nginxDeployment());
    const ref = rbRef("nginx");
    await eventually(() => env.store.get(ref));
    await schedule(env.store, ref, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]);
    const work = (cluster: string) => ({ gk: WORK, namespace: `karmada-es-${cluster}`, name: workName("default", "nginx", "Deployment") });
    await eventually(async () => (await Promise.all([env.store.get<Work>(work("member1")), env.store.get<Work>(work("member2"))])).every((w) => cpuOfWork(w) === "100m"));

    await env.store.mutate<KubeObject>(deployRef("nginx"), (cur) => {
      cur.spec.replicas = 5;
      cur.spec.template.spec.containers[0].resources.requests.cpu = true;
      return cur;
    });
    const rb = await eventually(async () => {
      const b = await env.store.get<AnyResourceBinding>(ref);
      return stalledOf(b) ? b : undefined;
    }, { message: "the binding has Stalled" });
    const c = stalledOf(rb)!;
    assert.equal(c.reason, "InvalidTemplate");
    assert.ok(c.message?.includes(CPU_FIELD), c.message);
    assert.equal(rb.spec?.replicas, 3, "the binding keeps what the last readable template said");
    const bindingEvents = await eventually(async () => {
      const es = await listEventsFor(env.store, rb);
      return es.some((e) => e.reason === "SyncWorkFailed") ? es : undefined;
    });
    assert.equal(bindingEvents.find((e) => e.reason === "SyncWorkFailed")!.source.component, bindingControllerName);
    const template = await eventually(async () => {
      const t = await env.store.get(deployRef("nginx"));
      return stalledOf(t) ? t : undefined;
    });
    const templateReasons = new Set((await eventually(async () => {
      const es = await listEventsFor(env.store, template);
      return es.some((e) => e.reason === "SyncWorkFailed") && es.some((e) => e.reason === "ApplyPolicyFailed") ? es : undefined;
    })).map((e) => e.reason));
    assert.ok(templateReasons.has("ApplyPolicyFailed") && templateReasons.has("SyncWorkFailed"));
    assert.ok((await metric(env, METRICS.reconcileErrors, bindingControllerName, ',reason="terminal"')) >= 1);
    const [w1, w2] = await Promise.all([env.store.get<Work>(work("member1")), env.store.get<Work>(work("member2"))]);
    assert.deepEqual([cpuOfWork(w1), cpuOfWork(w2)], ["100m", "100m"], "the members keep the last good manifest");
    assert.deepEqual([replicasOfWork(w1), replicasOfWork(w2)], [1, 2]);

    await env.store.mutate<KubeObject>(deployRef("nginx"), (cur) => {
      cur.spec.template.spec.containers[0].resources.requests.cpu = "200m";
      return cur;
    });
    await eventually(async () => (await env.store.get<AnyResourceBinding>(ref))?.spec?.replicaRequirements?.resourceRequest?.cpu === "200m", { message: "the binding follows the fixed template" });
    await eventually(async () => (await Promise.all([env.store.get<Work>(work("member1")), env.store.get<Work>(work("member2"))])).every((w) => cpuOfWork(w) === "200m"), { message: "the Works follow" });
    await eventually(async () => !stalledOf(await env.store.get(ref)) && !stalledOf(await env.store.get(deployRef("nginx"))), { message: "Stalled removed from both" });
    assert.equal(env.app.binding.terminalFailure(`${RB}|default|nginx-deployment`), undefined);
  } finally {
    await env.close();
  }
});
