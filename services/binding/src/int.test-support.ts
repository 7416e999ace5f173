import { randomUUID } from "node:crypto";
import { applyDefaults, isNotFound, type AnyResourceBinding, type KubeObject, type TargetCluster, type Work, rfc3339 } from "@flotilla/api";
import type { NatsConnection, Relay } from "@flotilla/events";
import type { ObjectStore } from "@flotilla/store";
import { FAST_CONTROLLERS, startService, testLogger, type ServiceBackends, type TestDatabase } from "@flotilla/testkit";
import { buildApp, type App, type AppDeps } from "./app.js";
import type { Settings } from "./settings.js";

export { sleep } from "@flotilla/testkit";

export const log = testLogger("binding");

export const TEST_SETTINGS: Partial<Settings> = {
  resyncMs: 0,
  directlyPurgeRequeueMs: 200,
  workDeletingRequeueMs: 200,
  policyFanoutWaitMs: 5000,
};

export interface Env {
  db: TestDatabase;
  store: ObjectStore;
  nc: NatsConnection;
  stream: string;
  prefix: string;
  relay: Relay;
  app: App;
  /** Builds and starts another app on the same database and stream (e.g. after stopping the first). */
  startApp(o?: Partial<AppDeps>): Promise<App>;
  close(): Promise<void>;
}

/** A fresh database, a stream of its own, a relay, and the binding app started on them. */
export async function setup(o: Partial<AppDeps> = {}): Promise<Env> {
  const build = (b: ServiceBackends, extra: Partial<AppDeps> = {}) =>
    buildApp({
      store: b.store,
      sql: b.db.sql,
      js: b.js,
      stream: b.stream,
      prefix: b.prefix,
      log,
      controllerOptions: FAST_CONTROLLERS,
      ...o,
      ...extra,
      settings: { ...TEST_SETTINGS, ...o.settings, ...extra.settings },
    });
  const start = async (app: App) => {
    await app.start();
    await app.consumer!.ready;
  };
  const env = await startService({ name: "binding", log, build, start });
  return { ...env, startApp: (extra) => env.startAnother(build(env, extra)) };
}

/** What the gateway's admission does to an object before storing it (defaults, permanent ids). */
export function admit<T extends KubeObject>(o: T): T {
  return applyDefaults(o, { now: new Date(), uuid: randomUUID });
}

export function nginxDeployment(o: { name?: string; namespace?: string; replicas?: number; labels?: Record<string, string> } = {}): KubeObject {
  const name = o.name ?? "nginx";
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: o.namespace ?? "default", labels: o.labels ?? { app: name } },
    spec: {
      replicas: o.replicas ?? 3,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "nginx", image: "nginx:1.25", resources: { requests: { cpu: "100m", memory: "128Mi" } } }] },
      },
    },
  };
}

/** The seed's `nginx-propagation` policy. */
export function nginxPropagation(o: { name?: string; namespace?: string; target?: string; clusters?: string[] } = {}): KubeObject {
  const clusters = o.clusters ?? ["member1", "member2"];
  return {
    apiVersion: "policy.karmada.io/v1alpha1",
    kind: "PropagationPolicy",
    metadata: { name: o.name ?? "nginx-propagation", namespace: o.namespace ?? "default" },
    spec: {
      resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: o.target ?? "nginx" }],
      placement: {
        clusterAffinity: { clusterNames: clusters },
        replicaScheduling: {
          replicaSchedulingType: "Divided",
          replicaDivisionPreference: "Weighted",
          weightPreference: { staticWeightList: clusters.map((c) => ({ targetCluster: { clusterNames: [c] }, weight: 1 })) },
        },
      },
    },
  };
}

export const RB = "work.karmada.io/ResourceBinding";
export const CRB = "work.karmada.io/ClusterResourceBinding";
export const WORK = "work.karmada.io/Work";

/** What the scheduler writes: `spec.clusters`, then `status.lastScheduledTime` (and its observed generation). */
export async function schedule(store: ObjectStore, ref: { gk: string; namespace?: string; name: string }, clusters: TargetCluster[], extra: Partial<NonNullable<AnyResourceBinding["spec"]>> = {}): Promise<AnyResourceBinding> {
  await store.mutate<AnyResourceBinding>(ref, (cur) => ({ ...cur, spec: { ...cur.spec, clusters, ...extra } }));
  const at = rfc3339(new Date());
  return (await store.mutate<AnyResourceBinding>(ref, (cur) => ({ ...cur, status: { ...cur.status, schedulerObservedGeneration: cur.metadata.generation, lastScheduledTime: at } }), { status: true }))!;
}

/** What the execution service writes on a Work once its manifest is applied and observed. */
export async function reportWork(store: ObjectStore, work: { namespace: string; name: string }, o: { status?: Record<string, unknown>; health?: string; applied?: boolean; message?: string }): Promise<Work | undefined> {
  return store.mutate<Work>(
    { gk: WORK, ...work },
    (cur) => {
      const m = cur.spec!.workload!.manifests![0] as KubeObject;
      const [group, version] = m.apiVersion.includes("/") ? m.apiVersion.split("/") : ["", m.apiVersion];
      return {
        ...cur,
        status: {
          conditions: [
            o.applied === false
              ? { type: "Applied", status: "False", reason: "AppliedFailed", message: o.message ?? "failed", lastTransitionTime: "2024-01-01T00:00:00Z" }
              : { type: "Applied", status: "True", reason: "AppliedSuccessful", message: "Manifest has been successfully applied", lastTransitionTime: "2024-01-01T00:00:00Z" },
          ],
          manifestStatuses:
            o.applied === false
              ? []
              : [{ identifier: { ordinal: 0, group, version, kind: m.kind, resource: `${m.kind.toLowerCase()}s`, namespace: m.metadata.namespace ?? "", name: m.metadata.name }, status: o.status as never, health: o.health ?? "Healthy" }],
        },
      };
    },
    { status: true },
  );
}

/** What the execution service does once the member object is gone: release the Work's finalizer. */
export async function releaseWork(store: ObjectStore, work: { namespace: string; name: string }): Promise<void> {
  try {
    await store.mutate<Work>({ gk: WORK, ...work }, (cur) => ({ ...cur, metadata: { ...cur.metadata, finalizers: [] } }));
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
