import { jsonEqual, rfc3339 } from "@flotilla/api";
import { createHash } from "node:crypto";
import { DEPLOYMENT, NODE, POD, STATEFULSET, type ApiResource } from "./api-catalog.js";
import { freeByNode, placePods, podRequests, unschedulableMessage, type NodeCapacity, type PodRequest, type PodUsage } from "./capacity.js";
import { cpuMillis, bytesOf } from "./quantity.js";
import { randomSuffix, type KObject, type ObjectStore, type StoreEvent } from "./store.js";

const WORKLOADS: readonly ApiResource[] = [DEPLOYMENT, STATEFULSET];
const SCHEDULE = "";
const same = (a: ApiResource, b: ApiResource) => a === b || (a.group === b.group && a.plural === b.plural);
const key = (res: ApiResource, ns: string, name: string) => `${res.kind}/${ns}/${name}`;

function parseKey(k: string): { res: ApiResource; ns: string; name: string } {
  const [kind, ns, name] = k.split("/") as [string, string, string];
  return { res: kind === "StatefulSet" ? STATEFULSET : DEPLOYMENT, ns, name };
}

const requestCache = new WeakMap<object, PodRequest>();
/** A pod's requests, cached by its (never modified) spec object. */
export function requestsOf(pod: KObject): PodRequest {
  const spec = pod.spec ?? {};
  let r = requestCache.get(spec);
  if (!r) {
    try {
      r = podRequests(spec);
    } catch {
      r = { cpuMillis: 0, memoryBytes: 0 };
    }
    requestCache.set(spec, r);
  }
  return r;
}

export function isTerminal(pod: KObject): boolean {
  const phase = pod.status?.phase;
  return phase === "Succeeded" || phase === "Failed";
}

export function podUsage(pod: KObject): PodUsage {
  const r = requestsOf(pod);
  const nodeName = pod.spec?.nodeName as string | undefined;
  return { cpuMillis: r.cpuMillis, memoryBytes: r.memoryBytes, ...(nodeName ? { nodeName } : {}), ...(isTerminal(pod) ? { terminal: true } : {}) };
}

const nodeCache = new WeakMap<object, NodeCapacity>();
/** A Node object's allocatable resources (bad quantities count as zero). */
export function nodeCapacity(node: KObject): NodeCapacity {
  let c = nodeCache.get(node);
  if (!c) {
    const a = (node.status?.allocatable ?? node.status?.capacity ?? {}) as Record<string, string | number>;
    const num = (f: (q: string | number) => number, q: string | number | undefined) => {
      try {
        return q === undefined ? 0 : f(q);
      } catch {
        return 0;
      }
    };
    c = {
      name: node.metadata.name,
      allocatable: { cpuMillis: num(cpuMillis, a.cpu), memoryBytes: num(bytesOf, a.memory), pods: Math.floor(num(Number, a.pods)) },
      ...(node.spec?.unschedulable ? { unschedulable: true } : {}),
    };
    nodeCache.set(node, c);
  }
  return c;
}

/** BestEffort without any requests, otherwise Burstable (the simulator does not check for Guaranteed). */
function qosClass(pod: KObject): string {
  const r = requestsOf(pod);
  return r.cpuMillis === 0 && r.memoryBytes === 0 ? "BestEffort" : "Burstable";
}

function controllerOf(pod: KObject): { res: ApiResource; name: string; uid: string } | undefined {
  const ref = pod.metadata.ownerReferences?.find((r) => r.controller);
  if (!ref) return undefined;
  const res = WORKLOADS.find((w) => w.kind === ref.kind);
  return res ? { res, name: ref.name, uid: ref.uid } : undefined;
}

function templateHash(template: unknown): string {
  return createHash("sha256").update(JSON.stringify(template ?? {})).digest("hex").slice(0, 10);
}

function maxUnavailable(obj: KObject, desired: number): number {
  if (obj.kind !== "Deployment") return 0;
  const strategy = obj.spec?.strategy;
  if (strategy?.type === "Recreate") return 0;
  const v = strategy?.rollingUpdate?.maxUnavailable ?? "25%";
  if (typeof v === "number") return Math.min(v, desired);
  const m = /^(\d+)%$/.exec(String(v));
  return m ? Math.floor((desired * Number(m[1])) / 100) : Number(v) || 0;
}

export interface WorkloadControllerOptions {
  /** The delay before a change to a Deployment or StatefulSet takes effect, read at each change. */
  readyDelayMs: () => number;
}

/**
 * The member cluster's Deployment and StatefulSet controller, kubelet and scheduler in one:
 * a readyDelayMs after a workload's spec changes, it creates or removes its pods, binds the pods
 * that fit the nodes' free capacity (Running and ready at once) and writes the workload's status.
 * Pods that do not fit stay Pending without a nodeName until capacity frees up.
 *
 * Simplifications: Deployments own their pods directly (no ReplicaSets); a template change
 * replaces all pods at once; readiness has no probes; the Available/Progressing conditions are
 * also written on StatefulSets.
 */
export class WorkloadController {
  /** Work waiting for its delay: workload key → due time; SCHEDULE is a pass over pending pods only. */
  private readonly due = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private readonly seenGeneration = new Map<string, number>();
  /** Workloads made unhealthy on purpose (`Kind/namespace/name`): their pods run but never turn ready. */
  private readonly failing = new Set<string>();
  private writing = 0;
  private podSeq = 0;
  private readonly unsubscribe: () => void;
  private stopped = false;

  constructor(
    private readonly store: ObjectStore,
    private readonly opts: WorkloadControllerOptions,
  ) {
    this.unsubscribe = store.subscribe((e) => this.onEvent(e));
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    this.due.clear();
    this.disarm();
  }

  /** Workloads whose pods or status are waiting for the delay. */
  get pending(): number {
    return this.due.size;
  }

  /** Runs every waiting reconcile now (tests and the admin API use this to skip the delay). */
  flush(): void {
    const keys = [...this.due.keys()].filter((k) => k !== SCHEDULE);
    this.due.clear();
    this.disarm();
    this.run(keys);
  }

  /**
   * A health fault on one Deployment or StatefulSet: while `unhealthy`, its pods keep running but
   * none is ready (as with a failing readiness probe), so its status shows 0 ready replicas and
   * Karmada's health interpretation says Unhealthy. The status is rewritten at once.
   */
  setUnhealthy(kind: "Deployment" | "StatefulSet", namespace: string, name: string, unhealthy: boolean): void {
    const res = kind === "StatefulSet" ? STATEFULSET : DEPLOYMENT;
    const k = key(res, namespace, name);
    if (unhealthy) this.failing.add(k);
    else this.failing.delete(k);
    this.updateStatuses(new Set([k]));
  }

  /** The workloads with a health fault, as `Kind/namespace/name`. */
  get unhealthy(): string[] {
    return [...this.failing].sort();
  }

  /** Nodes changed: pods on nodes that are gone go back to Pending, then pending pods are placed. */
  nodesChanged(): void {
    const names = new Set(this.store.list(NODE).map((n) => n.metadata.name));
    const owners = new Set<string>();
    this.write(() => {
      for (const pod of this.store.list(POD)) {
        const nodeName = pod.spec?.nodeName as string | undefined;
        if (!nodeName || names.has(nodeName) || isTerminal(pod)) continue;
        const spec = { ...pod.spec };
        delete spec.nodeName;
        this.store.replace(POD, pod.metadata.namespace ?? "", pod.metadata.name, { ...pod, spec, status: { phase: "Pending" } }, { internal: true });
        const c = controllerOf(pod);
        if (c) owners.add(key(c.res, pod.metadata.namespace ?? "", c.name));
      }
    });
    this.updateStatuses(owners);
    this.enqueueSchedule();
  }

  // ---------------------------------------------------------------------------------------------

  private onEvent(e: StoreEvent): void {
    if (this.writing || this.stopped) return;
    const o = e.object;
    const ns = o.metadata.namespace ?? "";
    const workload = WORKLOADS.find((w) => same(w, e.resource));
    if (workload) {
      const k = key(workload, ns, o.metadata.name);
      if (e.type === "DELETED") {
        this.seenGeneration.delete(k);
        this.due.delete(k);
        this.deletePodsOf(o);
        return;
      }
      if (o.metadata.deletionTimestamp) return;
      if (this.seenGeneration.get(k) === o.metadata.generation) return; // status or metadata only
      this.seenGeneration.set(k, o.metadata.generation);
      this.enqueue(k);
    } else if (same(POD, e.resource)) {
      // A pod written through the API: its owner may need a replacement, pending pods may now fit.
      const c = controllerOf(o);
      if (e.type === "DELETED" && c) this.enqueue(key(c.res, ns, c.name));
      this.enqueueSchedule();
    }
  }

  private enqueue(k: string): void {
    if (this.due.has(k) || this.stopped) return;
    const at = Date.now() + this.opts.readyDelayMs();
    this.due.set(k, at);
    if (at < this.timerAt) this.arm(at);
  }

  private enqueueSchedule(): void {
    this.enqueue(SCHEDULE);
  }

  /** One timer per cluster, for the earliest due work; everything due by then runs as one batch. */
  private arm(at: number): void {
    this.disarm();
    this.timerAt = at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - Date.now()));
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = Date.now();
    const keys: string[] = [];
    let next = Infinity;
    for (const [k, at] of this.due) {
      if (at <= now + 1) {
        this.due.delete(k);
        if (k !== SCHEDULE) keys.push(k);
      } else next = Math.min(next, at);
    }
    this.run(keys);
    if (next < Infinity && next < this.timerAt) this.arm(next);
  }

  private run(keys: string[]): void {
    if (this.stopped) return;
    const owners = new Set<string>(keys);
    for (const k of keys) this.syncPods(k);
    for (const o of this.schedulePending()) owners.add(o);
    this.updateStatuses(owners);
  }

  private write<T>(fn: () => T): T {
    this.writing++;
    try {
      return fn();
    } finally {
      this.writing--;
    }
  }

  private podsOf(owner: KObject): KObject[] {
    const uid = owner.metadata.uid;
    return this.store.list(POD, owner.metadata.namespace ?? "", (p) => p.metadata.ownerReferences?.some((r) => r.uid === uid) ?? false);
  }

  private deletePodsOf(owner: KObject): void {
    const pods = this.podsOf(owner);
    if (pods.length === 0) return;
    this.write(() => {
      for (const p of pods) this.store.delete(POD, p.metadata.namespace ?? "", p.metadata.name);
    });
    this.enqueueSchedule();
  }

  /** Creates and removes pods so the workload has spec.replicas of the current template. */
  private syncPods(k: string): void {
    const { res, ns, name } = parseKey(k);
    const owner = this.store.get(res, ns, name);
    if (!owner || owner.metadata.deletionTimestamp) return;
    const desired = Math.max(0, Number(owner.spec?.replicas ?? 1) || 0);
    const hash = templateHash(owner.spec?.template);
    const pods = this.podsOf(owner);
    const hashLabel = res === DEPLOYMENT ? "pod-template-hash" : "controller-revision-hash";
    const currentHash = res === DEPLOYMENT ? hash : `${name}-${hash}`;
    const stale = (p: KObject) => p.metadata.labels?.[hashLabel] !== currentHash;
    const remove: KObject[] = [];
    const create: string[] = [];
    if (res === STATEFULSET) {
      const byName = new Map(pods.map((p) => [p.metadata.name, p]));
      for (const p of pods) {
        const ordinal = Number(p.metadata.name.slice(name.length + 1));
        if (!(ordinal < desired) || stale(p)) remove.push(p);
      }
      for (let i = 0; i < desired; i++) {
        const n = `${name}-${i}`;
        const p = byName.get(n);
        if (!p || stale(p)) create.push(n);
      }
    } else {
      const keep = pods.filter((p) => !stale(p));
      remove.push(...pods.filter(stale));
      if (keep.length > desired) {
        // Remove pending pods first, then the newest.
        const order = [...keep].sort((a, b) => Number(!!a.spec?.nodeName) - Number(!!b.spec?.nodeName) || Number(b.metadata.resourceVersion) - Number(a.metadata.resourceVersion));
        remove.push(...order.slice(0, keep.length - desired));
      }
      for (let i = keep.length; i < desired; i++) create.push(`${name}-${hash}-${randomSuffix()}`);
    }
    if (remove.length === 0 && create.length === 0) return;
    this.write(() => {
      for (const p of remove) this.store.delete(POD, ns, p.metadata.name);
      const template = owner.spec?.template ?? {};
      for (const podName of create) {
        const labels: Record<string, string> = { ...(template.metadata?.labels ?? {}), [hashLabel]: currentHash };
        if (res === STATEFULSET) labels["statefulset.kubernetes.io/pod-name"] = podName;
        this.store.create(
          POD,
          ns,
          {
            apiVersion: "v1",
            kind: "Pod",
            metadata: {
              name: podName,
              namespace: ns,
              labels,
              ...(template.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
              ownerReferences: [{ apiVersion: owner.apiVersion, kind: owner.kind, name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true }],
            },
            spec: { ...(template.spec ?? {}), schedulerName: template.spec?.schedulerName ?? "default-scheduler" },
            status: { phase: "Pending" },
          },
          { internal: true },
        );
      }
    });
    if (remove.length) this.enqueueSchedule();
  }

  /**
   * Binds pending pods (oldest first) to nodes with room; the bound ones start Running and ready.
   * Returns the owners whose pods changed.
   */
  private schedulePending(): Set<string> {
    const owners = new Set<string>();
    const nodes = this.store.list(NODE).map(nodeCapacity);
    const all = this.store.list(POD);
    const pending = all
      .filter((p) => !p.spec?.nodeName && !isTerminal(p) && !p.metadata.deletionTimestamp)
      .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion));
    if (pending.length === 0) return owners;
    const free = freeByNode(nodes, all.map(podUsage));
    const placed = placePods(nodes, free, pending.map(requestsOf));
    const now = rfc3339(new Date());
    this.write(() => {
      pending.forEach((pod, i) => {
        const nodeName = placed[i];
        const ns = pod.metadata.namespace ?? "";
        let status: Record<string, unknown>;
        let spec = pod.spec;
        if (nodeName) {
          spec = { ...pod.spec, nodeName };
          status = this.runningStatus(pod, now);
        } else {
          const message = unschedulableMessage(nodes, free, requestsOf(pod));
          const cond = pod.status?.conditions?.[0];
          status = {
            phase: "Pending",
            conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message, lastProbeTime: null, lastTransitionTime: cond?.message === message ? cond.lastTransitionTime : now }],
            qosClass: qosClass(pod),
          };
          if (jsonEqual(status, pod.status)) return;
        }
        this.store.replace(POD, ns, pod.metadata.name, { ...pod, spec, status }, { internal: true });
        const c = controllerOf(pod);
        if (c) owners.add(key(c.res, ns, c.name));
      });
    });
    return owners;
  }

  private runningStatus(pod: KObject, now: string): Record<string, unknown> {
    const n = this.podSeq++;
    const cond = (type: string) => ({ type, status: "True", lastProbeTime: null, lastTransitionTime: now });
    const containers = (pod.spec?.containers ?? []) as { name?: string; image?: string }[];
    return {
      phase: "Running",
      conditions: [cond("PodReadyToStartContainers"), cond("Initialized"), cond("Ready"), cond("ContainersReady"), cond("PodScheduled")],
      hostIP: "10.0.0.1",
      podIP: `10.244.${(n >> 8) & 255}.${n & 255}`,
      startTime: now,
      containerStatuses: containers.map((c) => ({
        name: c.name ?? "",
        image: c.image ?? "",
        imageID: "",
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: now } },
      })),
      qosClass: qosClass(pod),
    };
  }

  /** Writes status for the given workloads from their pods. */
  private updateStatuses(keys: Set<string>): void {
    const byNs = new Map<string, Map<string, KObject[]>>(); // namespace → owner uid → pods
    const podsFor = (ns: string, uid: string) => {
      let idx = byNs.get(ns);
      if (!idx) {
        idx = new Map();
        for (const p of this.store.list(POD, ns)) {
          for (const r of p.metadata.ownerReferences ?? []) {
            let l = idx.get(r.uid);
            if (!l) idx.set(r.uid, (l = []));
            l.push(p);
          }
        }
        byNs.set(ns, idx);
      }
      return idx.get(uid) ?? [];
    };
    this.write(() => {
      for (const k of keys) {
        const { res, ns, name } = parseKey(k);
        const owner = this.store.get(res, ns, name);
        if (!owner || owner.metadata.deletionTimestamp) continue;
        const status = this.statusFor(owner, podsFor(ns, owner.metadata.uid));
        if (jsonEqual(status, owner.status)) continue;
        this.store.replace(res, ns, name, { ...owner, status }, { subresource: "status", internal: true });
      }
    });
  }

  private statusFor(owner: KObject, pods: KObject[]): Record<string, unknown> {
    const desired = Math.max(0, Number(owner.spec?.replicas ?? 1) || 0);
    const hash = templateHash(owner.spec?.template);
    const isSts = owner.kind === "StatefulSet";
    const rev = isSts ? `${owner.metadata.name}-${hash}` : hash;
    const live = pods.filter((p) => !p.metadata.deletionTimestamp && !isTerminal(p));
    const updated = live.filter((p) => p.metadata.labels?.[isSts ? "controller-revision-hash" : "pod-template-hash"] === rev);
    const failing = this.failing.has(key(isSts ? STATEFULSET : DEPLOYMENT, owner.metadata.namespace ?? "", owner.metadata.name));
    const ready = failing ? 0 : live.filter((p) => p.status?.phase === "Running").length;
    const replicas = live.length;
    const available = ready;
    const prev = (owner.status?.conditions ?? []) as { type: string; status: string; reason: string; lastTransitionTime?: string; lastUpdateTime?: string }[];
    const now = rfc3339(new Date());
    const condition = (type: string, ok: boolean, reason: string, message: string) => {
      const old = prev.find((c) => c.type === type);
      const statusText = ok ? "True" : "False";
      const same = old?.status === statusText && old.reason === reason;
      return {
        type,
        status: statusText,
        lastUpdateTime: same ? (old?.lastUpdateTime ?? now) : now,
        lastTransitionTime: old?.status === statusText ? (old.lastTransitionTime ?? now) : now,
        reason,
        message,
      };
    };
    const what = isSts ? `StatefulSet "${owner.metadata.name}"` : `ReplicaSet "${owner.metadata.name}-${hash}"`;
    const minAvailable = available >= desired - maxUnavailable(owner, desired);
    const complete = updated.length === desired && replicas === desired && available === desired;
    const conditions = [
      condition(
        "Available",
        minAvailable,
        minAvailable ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable",
        minAvailable ? `${owner.kind} has minimum availability.` : `${owner.kind} does not have minimum availability.`,
      ),
      condition("Progressing", true, complete ? "NewReplicaSetAvailable" : "ReplicaSetUpdated", complete ? `${what} has successfully progressed.` : `${what} is progressing.`),
    ];
    const base: Record<string, unknown> = {
      observedGeneration: owner.metadata.generation,
      replicas,
      updatedReplicas: updated.length,
      readyReplicas: ready,
      availableReplicas: available,
    };
    if (isSts) {
      return { ...base, currentReplicas: updated.length, currentRevision: rev, updateRevision: rev, collisionCount: 0, conditions };
    }
    return { ...base, ...(replicas - available > 0 ? { unavailableReplicas: replicas - available } : {}), conditions };
  }
}
