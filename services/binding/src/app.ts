import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { FastifyInstance } from "fastify";
import { GK, RESOURCE_TYPES, groupKind, isTemplateType } from "@flotilla/api";
import { consume, streamSubject, type JetStreamClient, type WakeUpConsumer } from "@flotilla/events";
import type { Logger } from "@flotilla/log";
import { SeenVersions, ServiceHost, createController, type Metrics, storedAt, type Controller, type KeyLocks } from "@flotilla/runtime";
import { EventRecorder, kindsIn, type ObjectStore, type Sql } from "@flotilla/store";
import { DEFAULT_SETTINGS, type Settings } from "./settings.js";
import { bindingController, bindingControllerName } from "./controllers/binding.js";
import { PolicyCache, ReconcileStarts } from "./controllers/caches.js";
import type { ControllerDeps } from "./controllers/common.js";
import { dependenciesDistributor } from "./controllers/dependencies.js";
import { detectorName, resourceDetector } from "./controllers/detector.js";
import { OverridePolicies } from "./controllers/overrides.js";
import { policyController } from "./controllers/policy.js";
import { routeWakeUp } from "./controllers/wakeups.js";
import { compileSkippedNamespaces, isIgnoredTemplate } from "./logic/namespaces.js";

export interface AppDeps {
  store: ObjectStore;
  /** Holds the controllers' durable timers (the store's pool). */
  sql: Sql;
  js: JetStreamClient;
  stream: string;
  prefix: string;
  log: Logger;
  settings?: Partial<Settings>;
  now?: () => Date;
  uuid?: () => string;
  /** The replica's name in the Events it records (default: the hostname). */
  host?: string;
  /** Readiness of the dependencies (database reachable); the consumer's readiness is added. */
  ready?: () => Promise<boolean>;
  /** Which controllers run (default: all; when given, only those set). A disabled controller's wake-ups are acked unseen. */
  run?: { detector?: boolean; policy?: boolean; binding?: boolean; dependencies?: boolean };
  /** Options passed to every controller (tests shrink timings). */
  controllerOptions?: { timerPollMs?: number; backoff?: { baseMs?: number; maxMs?: number }; stopTimeoutMs?: number; timeoutMs?: number };
  /** One replica reconciles a key at a time (the process's key locks; default: none). */
  keyLocks?: KeyLocks;
  /** The process's metrics registry (default: one of its own). */
  metrics?: Metrics;
}

export interface App {
  http: FastifyInstance;
  detector: Controller;
  policy: Controller;
  binding: Controller;
  dependencies: Controller;
  metrics: Metrics;
  readonly consumer: WakeUpConsumer | undefined;
  /** Starts the controllers and the wake-up consumer; with `listen`, the HTTP listener too. */
  start(listen?: { host: string; port: number }): Promise<{ url?: string }>;
  stop(): Promise<void>;
}

/** Everything of the binding service, built from its dependencies (main.ts and the tests build it the same way). */
export function buildApp(deps: AppDeps): App {
  const settings: Settings = { ...DEFAULT_SETTINGS, ...deps.settings };
  const skipped = compileSkippedNamespaces(settings.skippedNamespaces);
  const now = deps.now ?? (() => new Date());
  const recorder = (component: string) =>
    new EventRecorder(deps.store, {
      component,
      host: deps.host ?? hostname(),
      now,
      onError: (err, e) => deps.log.warn({ err, controller: component, reason: e.reason }, "recording an event failed"),
    });
  const d: ControllerDeps = {
    store: deps.store,
    settings,
    skipped,
    now,
    uuid: deps.uuid ?? randomUUID,
    seen: { detector: new SeenVersions(), binding: new SeenVersions(), dependencies: new SeenVersions() },
    policies: new PolicyCache(deps.store, settings.policyCacheTtlMs),
    detectorStarts: new ReconcileStarts(),
    events: { detector: recorder(detectorName), binding: recorder(bindingControllerName) },
    overridePolicies: new OverridePolicies(deps.store, deps.log.child({ component: "override-policies" })),
  };
  const run = deps.run
    ? { detector: !!deps.run.detector, policy: !!deps.run.policy, binding: !!deps.run.binding, dependencies: !!deps.run.dependencies }
    : { detector: true, policy: true, binding: true, dependencies: true };
  const common = { sql: deps.sql, log: deps.log, resyncMs: settings.resyncMs, keyLocks: deps.keyLocks, ...deps.controllerOptions };
  const backoff = deps.controllerOptions?.backoff;
  const templateGks = RESOURCE_TYPES.filter(isTemplateType).map(groupKind);

  const detector = createController({
    ...common,
    backoff,
    reconciler: resourceDetector(d),
    concurrency: settings.detectorConcurrency,
    listKeys: () => kindsIn(deps.store, templateGks).keys({ keep: (o) => !isIgnoredTemplate(o, skipped) }),
  });
  const policy = createController({
    ...common,
    backoff,
    reconciler: policyController({ ...d, enqueueTemplate: (k) => detector.enqueue(k) }),
    concurrency: settings.policyConcurrency,
    listKeys: () => kindsIn(deps.store, [GK.propagationPolicy, GK.clusterPropagationPolicy]).keys(),
  });
  const binding = createController({
    ...common,
    backoff,
    reconciler: bindingController(d),
    concurrency: settings.bindingConcurrency,
    listKeys: () => kindsIn(deps.store, [GK.resourceBinding, GK.clusterResourceBinding]).keys(),
  });
  const dependencies = createController({
    ...common,
    backoff,
    reconciler: dependenciesDistributor(d),
    concurrency: settings.dependenciesConcurrency,
    listKeys: () => kindsIn(deps.store, [GK.resourceBinding]).keys(),
  });
  const enabled = [run.detector && detector, run.policy && policy, run.binding && binding, run.dependencies && dependencies].filter((c): c is Controller => !!c);
  const host = new ServiceHost({ name: "binding", log: deps.log, metrics: deps.metrics, ready: deps.ready })
    .step({ start: () => d.overridePolicies.informer.start(), stop: () => d.overridePolicies.informer.stop() })
    .controllers(...enabled);
  let consumer: WakeUpConsumer | undefined;
  host.wakeUps(settings.durable, () => {
    consumer = consume({
      js: deps.js,
      stream: deps.stream,
      durable: settings.durable,
      subject: streamSubject(deps.prefix),
      concurrency: 1000,
      maxAckPending: 1000,
      log: deps.log.child({ component: "wakeups" }),
      handler: async (w, m) => {
        const keys = await routeWakeUp(w, d);
        const since = storedAt(m);
        const trace = w.traceContext;
        // the wake-up's version speaks for its own object's key only (a parked key skips versions it failed on)
        const hint = (k: string) => (k === keys.own ? { resourceVersion: w.resourceVersion, since, trace } : { since, trace });
        const waits: Promise<void>[] = [];
        if (run.detector) for (const k of keys.detector) waits.push(detector.enqueue(k, hint(k)));
        if (run.policy) for (const k of keys.policy) waits.push(policy.enqueue(k, hint(k)));
        if (run.binding) for (const k of keys.binding) waits.push(binding.enqueue(k, hint(k)));
        if (run.dependencies) for (const k of keys.dependencies) waits.push(dependencies.enqueue(k, hint(k)));
        await Promise.all(waits);
      },
    });
    return [consumer];
  });

  return {
    http: host.http,
    detector,
    policy,
    binding,
    dependencies,
    metrics: host.metrics,
    get consumer() {
      return consumer;
    },
    async start(listen) {
      await host.start();
      return listen ? { url: (await host.listen(listen)).url } : {};
    },
    stop: () => host.stop(),
  };
}
