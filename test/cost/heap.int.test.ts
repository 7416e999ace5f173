// Retained heap per cached object, per in-process cache that grows with the number of objects
// (issue 22): each cache is built as its service builds it, filled with a few thousand realistic
// objects (from Postgres where the service lists them from the store), and the heap measured
// after a full GC before and after; the median of three rounds (after one warm-up round) divided
// by the count must stay within its budget in heap-budget.ts.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import {
  ClusterPropagationPolicyPermanentIDLabel,
  GK,
  KARMADA,
  defaultResourceModels,
  kindKey,
  type AnyPropagationPolicy,
  type AnyResourceBinding,
  type Cluster,
  type KubeObject,
  type Work,
} from "@flotilla/api";
import type { MemberClient } from "@flotilla/kube";
import { digest, objectKeyOf, objectVersion, desiredObject } from "@flotilla/member-apply";
import { DEFAULT_APIS } from "@flotilla/member-sim";
import { LastSignatures, SeenVersions, WorkQueue } from "@flotilla/runtime";
import { ObjectStore } from "@flotilla/store";
import { freshDatabase, testLogger, type TestDatabase } from "@flotilla/testkit";
import { buildBinding } from "../../services/binding/src/logic/binding.js";
import { withClaimMeta, claimFor } from "../../services/binding/src/logic/claim.js";
import { buildWork } from "../../services/binding/src/logic/work.js";
import { ReconcileStarts } from "../../services/binding/src/controllers/caches.js";
import { ClusterCache as ExecutionClusterCache } from "../../services/execution/src/controllers/cluster-cache.js";
import { Members } from "../../services/execution/src/controllers/members.js";
import { RbacAuthorizer } from "../../services/gateway/src/auth/access.js";
import { bindingLoads } from "../../services/scheduler/src/controllers/binding-loads.js";
import { ClusterCache as SchedulerClusterCache } from "../../services/scheduler/src/controllers/cluster-cache.js";
import { AssumedLedger } from "../../services/scheduler/src/logic/assumed.js";
import { HEAP_BUDGET, type CacheName } from "./heap-budget.js";

const log = testLogger("heap");
const ROUNDS = 3;
/**
 * The key-only caches cost little to fill but vary more from round to round (when the GC
 * replaces a concatenated key by its flat copy is not fixed): more rounds for their median.
 */
const KEY_ROUNDS = 5;
const N = { bindings: 3000, clusters: 500, roleBindings: 3000, memberObjects: 2000, keys: 20_000 };

v8.setFlagsFromString("--expose-gc");
const gc = (globalThis.gc ?? runInNewContext("gc")) as () => void;

function heapAfterGc(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

/** What one round built: kept alive until measured, then released. */
interface Filled {
  keep: unknown;
  release?: () => Promise<void> | void;
}

const measured = new Map<CacheName, number>();

/**
 * Bytes retained per object: a warm-up round (the first list of a kind, driver buffers, code
 * compiled on first use), then the median of `rounds` rounds of (heap with the cache filled − heap
 * before) / n.
 */
async function perObject(name: CacheName, n: number, fill: () => Promise<Filled> | Filled, rounds = ROUNDS): Promise<number> {
  const samples: number[] = [];
  let base = heapAfterGc();
  for (let round = 0; round <= rounds; round++) {
    let filled: Filled | undefined = await fill();
    const full = heapAfterGc();
    if (round > 0) samples.push((full - base) / n);
    await filled.release?.();
    filled = undefined;
    // what the round built is unreachable now: the next round starts from here
    base = heapAfterGc();
  }
  samples.sort((a, b) => a - b);
  const median = Math.round(samples[Math.floor(samples.length / 2)]!);
  measured.set(name, median);
  return median;
}

function check(name: CacheName, bytes: number): void {
  const b = HEAP_BUDGET[name];
  assert.ok(bytes <= b.bytes, `${name}: ${bytes} bytes retained per object, over its budget of ${b.bytes} (${b.why})`);
}

// ---------------------------------------------------------------------------------------------
// objects, as the services see them

const NAMESPACES = 20;
const nsOf = (i: number) => `load-${i % NAMESPACES}`;

/** The load runner's Deployment (test/load/e2e/run.ts): 3 replicas, one container with requests. */
function deployment(i: number): KubeObject {
  const name = `app-${i}`;
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: nsOf(i), labels: { app: name } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "app", image: "nginx", resources: { requests: { cpu: "100m", memory: "128Mi" } } }] } },
    },
  };
}

const POLICY: AnyPropagationPolicy = {
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "ClusterPropagationPolicy",
  metadata: { name: "load-e2e", labels: { [ClusterPropagationPolicyPermanentIDLabel]: randomUUID() } },
  spec: {
    resourceSelectors: Array.from({ length: NAMESPACES }, (_, i) => ({ apiVersion: "apps/v1", kind: "Deployment", namespace: nsOf(i) })),
    placement: {
      replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { dynamicWeight: "AvailableReplicas" } },
      spreadConstraints: [{ spreadByField: "cluster", maxGroups: 2, minGroups: 2 }],
    },
  },
} as AnyPropagationPolicy;

/** The Deployment as stored once claimed (server fields, the policy's claim). */
function storedTemplate(i: number): KubeObject {
  const t = deployment(i);
  const meta = withClaimMeta({ ...t.metadata, uid: randomUUID(), creationTimestamp: "2026-11-29T08:00:00Z", generation: 1, resourceVersion: String(1000 + i) }, claimFor(POLICY));
  return { ...t, metadata: meta };
}

/** A binding of the Deployment, scheduled on two clusters (1 + 2 replicas), with their status back. */
function binding(i: number): AnyResourceBinding {
  const t = storedTemplate(i);
  const b = buildBinding(t, POLICY);
  const targets = [
    { name: `member${(i % 10) + 1}`, replicas: 1 },
    { name: `member${((i + 1) % 10) + 1}`, replicas: 2 },
  ];
  const now = "2026-11-29T08:00:01Z";
  return {
    ...b,
    metadata: { ...b.metadata, labels: { ...b.metadata.labels, "resourcebinding.karmada.io/permanent-id": randomUUID() } },
    spec: { ...b.spec, clusters: targets },
    status: {
      schedulerObservedGeneration: 2,
      lastScheduledTime: now,
      conditions: [
        { type: "Scheduled", status: "True", reason: "Success", message: "Binding has been scheduled successfully.", lastTransitionTime: now },
        { type: "FullyApplied", status: "True", reason: "FullyAppliedSuccess", message: "All works have been successfully applied", lastTransitionTime: now },
      ],
      aggregatedStatus: targets.map((c) => ({
        clusterName: c.name,
        applied: true,
        health: "Healthy",
        status: { replicas: c.replicas, readyReplicas: c.replicas, updatedReplicas: c.replicas, availableReplicas: c.replicas, observedGeneration: 1, generation: 1, resourceTemplateGeneration: 1 },
      })),
    },
  } as AnyResourceBinding;
}

/** A member Cluster as the execution service keeps its status: every API it serves, its nodes and resources, with the default resource models. */
function cluster(i: number): Cluster {
  const name = `member-${i}`;
  const now = "2026-11-29T08:00:00Z";
  const byGv = new Map<string, { name: string; kind: string }[]>();
  for (const r of DEFAULT_APIS) {
    const gv = r.group ? `${r.group}/${r.version}` : r.version;
    byGv.set(gv, [...(byGv.get(gv) ?? []), { name: r.plural, kind: r.kind }]);
  }
  return {
    apiVersion: "cluster.karmada.io/v1alpha1",
    kind: "Cluster",
    metadata: { name, labels: { "topology.flotilla.io/region": `region-${i % 3}`, "topology.flotilla.io/zone": `zone-${i % 9}` } },
    spec: {
      id: randomUUID(),
      syncMode: "Push",
      apiEndpoint: `https://10.0.${i >> 8}.${i & 255}:6443`,
      secretRef: { namespace: "karmada-cluster", name },
      impersonatorSecretRef: { namespace: "karmada-cluster", name: `${name}-impersonator` },
      provider: "sim",
      region: `region-${i % 3}`,
      zone: `zone-${i % 9}`,
      resourceModels: defaultResourceModels(),
    },
    status: {
      kubernetesVersion: "v1.31.0",
      apiEnablements: [...byGv].map(([groupVersion, resources]) => ({ groupVersion, resources })),
      conditions: [{ type: "Ready", status: "True", reason: "ClusterReady", message: "cluster is healthy and ready to accept workloads", lastTransitionTime: now }],
      nodeSummary: { totalNum: 10, readyNum: 10 },
      resourceSummary: {
        allocatable: { cpu: "80", memory: "320Gi", pods: "1100", "ephemeral-storage": "1000Gi" },
        allocating: { cpu: "0", memory: "0", pods: "0" },
        allocated: { cpu: "31200m", memory: "39936Mi", pods: "312" },
        allocatableModelings: Array.from({ length: 9 }, (_, grade) => ({ grade, count: grade < 4 ? 10 : 0 })),
      },
    },
  } as Cluster;
}

/** A stored Cluster's credential: a service account token and the member's CA, owned by the Cluster. */
function clusterSecret(c: Cluster): KubeObject {
  const b64 = (n: number) => Buffer.alloc(n, `${c.metadata.name}`).toString("base64");
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { namespace: "karmada-cluster", name: c.metadata.name!, ownerReferences: [{ apiVersion: c.apiVersion, kind: "Cluster", name: c.metadata.name!, uid: c.metadata.uid! }] },
    data: { token: b64(900), caBundle: b64(1100) },
  } as KubeObject;
}

/** One namespace's RoleBinding of a user to the edit ClusterRole. */
function roleBinding(i: number): KubeObject {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { namespace: `team-${i % 500}`, name: `edit-${i}` },
    subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: `user-${i}@example.com` }],
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
  } as KubeObject;
}

/** The Work the binding controller writes for the Deployment on one cluster. */
function work(i: number): Work {
  const b = binding(i);
  const target = b.spec!.clusters![0]!;
  return buildWork({ template: storedTemplate(i), binding: b, target, targetCount: 2, workId: randomUUID() });
}

const fieldsOf = (m: Record<string, string> | undefined) => Object.fromEntries([[".", {}], ...Object.keys(m ?? {}).map((k) => [`f:${k}`, {}])]);
const conditionFields = { ".": {}, "f:lastTransitionTime": {}, "f:lastUpdateTime": {}, "f:message": {}, "f:reason": {}, "f:status": {}, "f:type": {} };

/**
 * The member's copy of the Work's Deployment as a Kubernetes API server answers a list: the
 * defaults it fills in, the revision annotation, the status, and managedFields for the writer
 * (the execution service's PUT) and for kube-controller-manager's status updates.
 */
function memberDeployment(i: number): KubeObject {
  const w = work(i);
  const o = desiredObject(w, w.spec!.workload!.manifests![0] as KubeObject) as KubeObject & { spec: Record<string, unknown> & { template: { spec: { containers: Record<string, unknown>[] } } } };
  // one second apart: no two objects share a timestamp (the string pool gains nothing from them)
  const now = new Date(Date.UTC(2026, 10, 29, 8) + i * 1000).toISOString().replace(".000Z", "Z");
  const replicas = (o.spec.replicas as number | undefined) ?? 1;
  const container = o.spec.template.spec.containers[0]!;
  return {
    ...o,
    metadata: {
      ...o.metadata,
      annotations: { ...o.metadata.annotations, "deployment.kubernetes.io/revision": "1" },
      uid: randomUUID(),
      resourceVersion: String(5000 + i),
      generation: 1,
      creationTimestamp: now,
      managedFields: [
        {
          manager: "flotilla-execution",
          operation: "Update",
          apiVersion: "apps/v1",
          time: now,
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:metadata": { "f:annotations": fieldsOf(o.metadata.annotations), "f:labels": fieldsOf(o.metadata.labels) },
            "f:spec": {
              "f:progressDeadlineSeconds": {},
              "f:replicas": {},
              "f:revisionHistoryLimit": {},
              "f:selector": {},
              "f:strategy": { "f:rollingUpdate": { ".": {}, "f:maxSurge": {}, "f:maxUnavailable": {} }, "f:type": {} },
              "f:template": {
                "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
                "f:spec": {
                  "f:containers": {
                    'k:{"name":"app"}': { ".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:resources": { ".": {}, "f:requests": { ".": {}, "f:cpu": {}, "f:memory": {} } }, "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {} },
                  },
                  "f:dnsPolicy": {},
                  "f:restartPolicy": {},
                  "f:schedulerName": {},
                  "f:securityContext": {},
                  "f:terminationGracePeriodSeconds": {},
                },
              },
            },
          },
        },
        {
          manager: "kube-controller-manager",
          operation: "Update",
          apiVersion: "apps/v1",
          time: now,
          fieldsType: "FieldsV1",
          subresource: "status",
          fieldsV1: {
            "f:metadata": { "f:annotations": { "f:deployment.kubernetes.io/revision": {} } },
            "f:status": {
              "f:availableReplicas": {},
              "f:conditions": { ".": {}, 'k:{"type":"Available"}': conditionFields, 'k:{"type":"Progressing"}': conditionFields },
              "f:observedGeneration": {},
              "f:readyReplicas": {},
              "f:replicas": {},
              "f:updatedReplicas": {},
            },
          },
        },
      ],
    } as KubeObject["metadata"],
    spec: {
      ...o.spec,
      progressDeadlineSeconds: 600,
      revisionHistoryLimit: 10,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } },
      template: {
        ...o.spec.template,
        spec: {
          ...o.spec.template.spec,
          containers: [{ ...container, imagePullPolicy: "Always", terminationMessagePath: "/dev/termination-log", terminationMessagePolicy: "File" }],
          dnsPolicy: "ClusterFirst",
          restartPolicy: "Always",
          schedulerName: "default-scheduler",
          securityContext: {},
          terminationGracePeriodSeconds: 30,
        },
      },
    },
    status: {
      observedGeneration: 1,
      replicas,
      updatedReplicas: replicas,
      readyReplicas: replicas,
      availableReplicas: replicas,
      conditions: [
        { type: "Available", status: "True", lastUpdateTime: now, lastTransitionTime: now, reason: "MinimumReplicasAvailable", message: "Deployment has minimum availability." },
        { type: "Progressing", status: "True", lastUpdateTime: now, lastTransitionTime: now, reason: "NewReplicaSetAvailable", message: `ReplicaSet "${o.metadata.name}-5d8f7c9b6d" has successfully progressed.` },
      ],
    },
  };
}

// ---------------------------------------------------------------------------------------------
// the store: one database for the file, each kind written once

let db: TestDatabase;
let store: ObjectStore;

async function createAll<T extends KubeObject>(objects: Iterable<T>): Promise<T[]> {
  const out: T[] = [];
  let batch: Promise<T>[] = [];
  for (const o of objects) {
    batch.push(store.create(o));
    if (batch.length >= 500) {
      out.push(...(await Promise.all(batch)));
      batch = [];
    }
  }
  out.push(...(await Promise.all(batch)));
  return out;
}

function* range<T>(n: number, f: (i: number) => T): Generator<T> {
  for (let i = 0; i < n; i++) yield f(i);
}

before(async () => {
  db = await freshDatabase();
  store = new ObjectStore(db.sql);
  await createAll(range(N.bindings, binding));
  const clusters = await createAll(range(N.clusters, cluster));
  await createAll(clusters.map(clusterSecret));
  await createAll(range(N.roleBindings, roleBinding));
});

after(async () => {
  console.log(`retained heap per cached object (bytes): ${JSON.stringify(Object.fromEntries(measured))}`);
  await db?.drop();
});

// ---------------------------------------------------------------------------------------------
// the caches

test("gateway: RBAC authorizer, per RoleBinding", async () => {
  const bytes = await perObject("gateway.rbac", N.roleBindings, async () => {
    const rbac = new RbacAuthorizer(store, log);
    await rbac.start();
    assert.ok(rbac.snapshot().roleBindings.size >= 500);
    return { keep: rbac, release: () => rbac.stop() };
  });
  check("gateway.rbac", bytes);
});

test("scheduler: cluster cache, per Cluster", async () => {
  const bytes = await perObject("scheduler.clusters", N.clusters, async () => {
    const cache = new SchedulerClusterCache(store, { log });
    await cache.start();
    assert.equal(cache.snapshot().length, N.clusters);
    return { keep: cache, release: () => cache.stop() };
  });
  check("scheduler.clusters", bytes);
});

test("scheduler: binding informer and assumed ledger, per ResourceBinding", async () => {
  const bytes = await perObject("scheduler.bindingLedger", N.bindings, async () => {
    const ledger = new AssumedLedger(30_000);
    const informer = bindingLoads({ store, ledger, log });
    await informer.start();
    assert.equal(informer.size, N.bindings);
    return { keep: [ledger, informer], release: () => informer.stop() };
  });
  check("scheduler.bindingLedger", bytes);
});

test("execution: cluster cache, per Cluster and the Secret it names", async () => {
  const bytes = await perObject("execution.clusters", N.clusters, async () => {
    const cache = new ExecutionClusterCache(store, { refreshMs: 3_600_000, log });
    await cache.start();
    assert.equal(cache.names().length, N.clusters);
    assert.ok(cache.get("member-7")?.endpoint.ok, JSON.stringify(cache.get("member-7")?.endpoint));
    return { keep: cache, release: () => cache.stop() };
  });
  check("execution.clusters", bytes);
});

test("execution: member objects (informer copy and applied record), per member Deployment", async () => {
  // the member's list answer, as JSON text: each round parses its own copy, as the client does
  const text = JSON.stringify(Array.from({ length: N.memberObjects }, (_, i) => memberDeployment(i)));
  const bytes = await perObject("execution.memberObjects", N.memberObjects, async () => {
    const client = {
      list: () => Promise.resolve({ items: JSON.parse(text) as KubeObject[], resourceVersion: "99999" }),
      watch: (_a: string, _k: string, _o: unknown, h: { onDone(err?: unknown): void }) => Promise.resolve({ stop: () => h.onDone() }),
    } as unknown as MemberClient;
    const members = new Members({ log });
    const inf = members.informer("member1", client, "apps/v1", "Deployment");
    assert.ok(await inf.waitSynced(5000));
    for (const o of inf.list()) members.setRecord("member1", objectKeyOf(o), { digest: digest(o), version: objectVersion(o) });
    assert.equal(inf.size, N.memberObjects);
    return { keep: members, release: () => members.close() };
  });
  check("execution.memberObjects", bytes);
});

const templateKey = (i: number) => kindKey({ gk: "apps/Deployment", namespace: nsOf(i), name: `app-${i}` });
const bindingKeyOf = (i: number) => kindKey({ gk: GK.resourceBinding, namespace: nsOf(i), name: `app-${i}-deployment` });

test("runtime: SeenVersions, per key", async () => {
  const bytes = await perObject("runtime.seenVersions", N.keys, () => {
    const seen = new SeenVersions();
    for (let i = 0; i < N.keys; i++) {
      const k = bindingKeyOf(i);
      seen.wrote(k, String(200_000 + i));
      seen.reconciled(k, String(200_001 + i), 2);
    }
    return { keep: seen };
  }, KEY_ROUNDS);
  check("runtime.seenVersions", bytes);
});

test("runtime: LastSignatures, per key", async () => {
  const bytes = await perObject("runtime.lastSignatures", N.keys, () => {
    const last = new LastSignatures(N.keys);
    for (let i = 0; i < N.keys; i++) last.record(kindKey({ gk: KARMADA.cluster.group + "/Cluster", name: `member-${i}` }), JSON.stringify([{ key: "cluster.karmada.io/not-ready", effect: "NoExecute" }]));
    return { keep: last };
  }, KEY_ROUNDS);
  check("runtime.lastSignatures", bytes);
});

test("runtime: work queue, per queued key", async () => {
  const bytes = await perObject("runtime.workQueue", N.keys, () => {
    const q = new WorkQueue();
    for (let i = 0; i < N.keys; i++) q.add(bindingKeyOf(i));
    return { keep: q };
  }, KEY_ROUNDS);
  check("runtime.workQueue", bytes);
});

test("binding: detector's reconcile starts, per template", async () => {
  const bytes = await perObject("binding.reconcileStarts", N.keys, () => {
    const starts = new ReconcileStarts();
    for (let i = 0; i < N.keys; i++) starts.mark(templateKey(i));
    return { keep: starts };
  }, KEY_ROUNDS);
  check("binding.reconcileStarts", bytes);
});
