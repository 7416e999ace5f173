// One Deployment's propagation is one trace: the gateway's request span, then (through the
// outbox row, the relay's wake-up and the controller runtime) the detector's reconcile that makes
// the ResourceBinding, the scheduler's, the binding controller's that writes the Works, and the
// execution's that applies them to the member. A Deployment that a policy created after it picks
// up propagates in the policy's trace instead (the policy controller's reconcile queues it for the
// detector). Every service runs in this process against the real Postgres and NATS, with spans
// kept in memory.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { Cluster, KubeObject } from "@flotilla/api";
import { SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { connectNats, ensureStream, jetstream, jetstreamManager, startRelay, type NatsConnection, type Relay } from "@flotilla/events";
import { startSimulator, type Simulator } from "@flotilla/member-sim";
import { startTracing, traceContextOf, type Tracing } from "@flotilla/runtime";
import { ObjectStore, openDatabase, type Database } from "@flotilla/store";
import { NATS_URL, eventually, freshDatabase, uniqueName, type TestDatabase } from "@flotilla/testkit";
import { buildApp as buildBinding } from "../../services/binding/src/app.js";
import { bindingControllerName } from "../../services/binding/src/controllers/binding.js";
import { detectorName } from "../../services/binding/src/controllers/detector.js";
import { policyControllerName } from "../../services/binding/src/controllers/policy.js";
import { log, nginxDeployment, nginxPropagation } from "../../services/binding/src/int.test-support.js";
import { buildExecution } from "../../services/execution/src/app.js";
import { bearer, testGatewayDeps } from "../../services/gateway/src/access.test-support.js";
import { buildGateway } from "../../services/gateway/src/app.js";
import { buildApp as buildScheduler } from "../../services/scheduler/src/app.js";
import { testSettings } from "../../services/scheduler/src/harness.test-support.js";

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let db: TestDatabase;
let relayDb: Database;
let nc: NatsConnection;
let relay: Relay;
let sim: Simulator;
const stream = uniqueName("TRACE").toUpperCase();
const prefix = uniqueName("trace");
const stops: Array<() => Promise<unknown>> = [];
let gateway: ReturnType<typeof buildGateway>;

before(async () => {
  tracing = startTracing({ service: "flotilla-test", exporter });
  db = await freshDatabase();
  relayDb = await openDatabase({ url: db.url, max: 2, create: false, migrate: false });
  nc = await connectNats({ servers: NATS_URL });
  await ensureStream(nc, { stream, prefix, maxAgeMs: 10 * 60_000 });
  relay = startRelay({ sql: relayDb.sql, nc, stream, prefix, pollMs: 20, retentionMs: 0 });
  // as runService builds it: a write keeps its caller's trace context on its outbox row
  const store = new ObjectStore(db.sql, { traceContext: () => traceContextOf() });
  const js = jetstream(nc);
  sim = await startSimulator({ admin: false, defaults: { readyDelayMs: 50 }, clusters: [{ name: "member1" }, { name: "member2" }] });

  gateway = buildGateway(testGatewayDeps(store));
  await gateway.http.ready();
  stops.push(() => gateway.stop());
  const binding = buildBinding({ store, sql: db.sql, js, stream, prefix, log, controllerOptions: { timerPollMs: 20, backoff: { baseMs: 20, maxMs: 300 } } });
  await binding.start();
  stops.push(() => binding.stop());
  const scheduler = buildScheduler({ store, sql: db.sql, js, stream, prefix, log, settings: testSettings });
  await scheduler.start({ host: "127.0.0.1", port: 0 });
  stops.push(() => scheduler.stop());
  const execution = buildExecution({
    store,
    sql: db.sql,
    js,
    log,
    settings: {
      CLUSTER_STATUS_UPDATE_FREQUENCY: 200,
      CLUSTER_FAILURE_THRESHOLD: 1000,
      CLUSTER_SUCCESS_THRESHOLD: 1000,
      CLUSTER_PROBE_TIMEOUT: 500,
      CLUSTER_CACHE_REFRESH: 200,
      MEMBER_REQUEST_TIMEOUT: 2000,
      WORK_RESYNC_PERIOD: 0,
      MEMBER_ALLOW_HTTP: "loopback",
      EVENTS_STREAM: stream,
      EVENTS_PREFIX: prefix,
    },
    runner: { timerPollMs: 20, backoff: { baseMs: 20, maxMs: 300 } },
  });
  await execution.start({});
  stops.push(() => execution.stop());

  for (const name of ["member1", "member2"]) {
    const c = sim.cluster(name);
    await store.create({ apiVersion: "v1", kind: "Secret", metadata: { name, namespace: "karmada-cluster" }, type: "Opaque", data: { token: Buffer.from(c.token).toString("base64") } });
    await store.create({
      apiVersion: "cluster.karmada.io/v1alpha1",
      kind: "Cluster",
      metadata: { name, finalizers: ["karmada.io/cluster-controller"] },
      spec: { apiEndpoint: c.url, secretRef: { namespace: "karmada-cluster", name }, syncMode: "Push" },
    });
  }
  // the members are probed Ready before anything is placed on them
  await eventually(
    async () => {
      const ready = await Promise.all(
        ["member1", "member2"].map(async (name) => {
          const c = await store.get<Cluster>({ gk: "cluster.karmada.io/Cluster", name });
          return c?.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True");
        }),
      );
      return ready.every(Boolean);
    },
    { timeoutMs: 20_000, message: "members Ready" },
  );
});

after(async () => {
  for (const s of stops.reverse()) await s().catch(() => {});
  await sim?.close();
  await relay?.stop().catch(() => {});
  await relayDb?.close().catch(() => {});
  await (await jetstreamManager(nc)).streams.delete(stream).catch(() => false);
  await nc?.close();
  await db?.drop();
  await tracing?.stop();
});

const post = (url: string, body: unknown) =>
  gateway.http.inject({ method: "POST", url, payload: JSON.stringify(body), headers: { "content-type": "application/json", ...bearer() } });
const policies = "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies";
const deployments = "/apis/apps/v1/namespaces/default/deployments";
const named = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const inTraceOf = (span: ReadableSpan) => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === span.spanContext().traceId);
const wanted = [`reconcile ${detectorName}`, "reconcile scheduler", `reconcile ${bindingControllerName}`, "reconcile execution", "apply to member"];

/** POSTs the object; returns the gateway's span of that request. */
const create = async (path: string, body: KubeObject) => {
  const before = new Set(exporter.getFinishedSpans().map((s) => s.spanContext().spanId));
  const res = await post(path, body);
  assert.equal(res.statusCode, 201, res.body);
  return eventually(() => exporter.getFinishedSpans().find((s) => !before.has(s.spanContext().spanId) && s.attributes["http.request.method"] === "POST" && s.attributes["url.path"] === path), {
    message: `the gateway's span of the creation of ${body.metadata.name}`,
  });
};

/** A successful reconcile of `key` by `controller` in the request's trace: all it was woken for there is done. */
const reconciledIn = (request: ReadableSpan, controller: string, key: string) =>
  eventually(() => inTraceOf(request).find((s) => s.name === `reconcile ${controller}` && s.attributes["flotilla.key"] === key && s.status.code !== SpanStatusCode.ERROR), {
    timeoutMs: 10_000,
    message: `a reconcile ${controller} of ${key} in the trace of ${request.name}`,
  });

/**
 * Asserts that the request's trace holds the whole propagation, down to the member apply of
 * `deployment` on both members, as one chain of parents from the request (`via`: the spans
 * between the request and the detector's reconcile).
 */
async function assertPropagationIn(request: ReadableSpan, deployment: string, via: string[]): Promise<void> {
  // applied on both members (Divided 1:1 over 3 replicas)
  await eventually(() => sim.cluster("member1").get("apps/v1", "Deployment", deployment, "default") && sim.cluster("member2").get("apps/v1", "Deployment", deployment, "default"), {
    timeoutMs: 30_000,
    message: `the Deployment ${deployment} on both members`,
  });
  const ours = (spans: ReadableSpan[]) => spans.filter((s) => s.name !== "apply to member" || String(s.attributes["flotilla.work"] ?? "").includes(`/${deployment}-`));
  const spans = await eventually(
    () => {
      const s = ours(inTraceOf(request));
      return wanted.every((n) => named(s, n).length > 0) ? s : undefined;
    },
    { timeoutMs: 10_000, message: `spans ${wanted.join(", ")} in the request's trace; have ${[...new Set(ours(inTraceOf(request)).map((s) => s.name))].join(", ")}` },
  );

  // each hop is a child of a span of the hop before it (parents are in the same trace). A span is
  // exported when it ends, and a reconcile may end after the reconciles its writes woke (the
  // binding controller's goes on after writing the Works): the chain is complete once every span
  // on it has ended.
  const chainTo = (s: ReadableSpan, byId: Map<string, ReadableSpan>): string[] => {
    const p = byId.get(s.parentSpanContext?.spanId ?? "");
    return p ? [...chainTo(p, byId), s.name] : [s.name];
  };
  const chainOf = () => {
    const byId = new Map(inTraceOf(request).map((s) => [s.spanContext().spanId, s]));
    return chainTo(named(spans, "apply to member")[0]!, byId);
  };
  const apply = named(spans, "apply to member")[0]!;
  const chain = await eventually(
    () => {
      const c = chainOf();
      return c[0] === request.name ? c : undefined;
    },
    { timeoutMs: 10_000 },
  ).catch(() => chainOf()); // (what there is: the assertions below say what is missing)
  assert.equal(chain[0], request.name, `the chain starts at the request: ${chain.join(" → ")}`);
  for (const n of [...via, ...wanted]) assert.ok(chain.includes(n), `${n} is on the way from the request to the member apply: ${chain.join(" → ")}`);
  const order = [...via, ...wanted];
  for (let i = 1; i < order.length; i++) assert.ok(chain.indexOf(order[i - 1]!) < chain.indexOf(order[i]!), `${order[i - 1]} before ${order[i]}: ${chain.join(" → ")}`);
  assert.equal(apply.attributes["flotilla.cluster"] !== undefined, true);
}

test("one Deployment's propagation is one trace: gateway → detector → scheduler → binding controller (Works) → execution → member apply", async () => {
  const policy = await create(policies, nginxPropagation());
  // The policy's own reconcile fans out to the templates it selects and queues them for the
  // detector, in the policy's trace (that change is what wakes them). Were the Deployment created
  // while it runs, that fan-out could find it before the Deployment's own wake-up reaches the
  // detector, and the propagation would then rightly be the policy's trace (as in the next test):
  // so the fan-out is over before the Deployment is created.
  await reconciledIn(policy, policyControllerName, "policy.karmada.io/PropagationPolicy|default|nginx-propagation");
  const request = await create(deployments, nginxDeployment());
  await assertPropagationIn(request, "nginx", []);
});

test("a Deployment a new policy picks up propagates in the policy's trace: gateway → policy controller → detector → … → member apply", async () => {
  // the Deployment first: its detector reconcile finds no policy for it, and nothing propagates
  const deployment = await create(deployments, nginxDeployment({ name: "web" }));
  await reconciledIn(deployment, detectorName, "apps/Deployment|default|web");
  const request = await create(policies, nginxPropagation({ name: "web-propagation", target: "web" }));
  // the policy's fan-out queues the Deployment for the detector from inside its own reconcile
  await assertPropagationIn(request, "web", [`reconcile ${policyControllerName}`]);
});
