import { createHash } from "node:crypto";
import { GK, AlreadyExistsError, rfc3339, type KubeObject } from "@flotilla/api";
import type { ObjectStore } from "./store.js";

/** The store's group/kind of core/v1 Event ("/Event"). */

export type EventType = "Normal" | "Warning";

/** What an Event is about: a stored object, or just its identity. */
export interface InvolvedObject {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
}

export interface EventInput {
  /** The object the event is about; its namespace is the event's ("default" for cluster-scoped objects). */
  involvedObject: InvolvedObject | KubeObject;
  /** UpperCamelCase, e.g. EvictCluster, TaintClusterSucceed, GracefulEvictionTaskRemoved, ScheduleBindingSucceed. */
  reason: string;
  message: string;
  /** Default Normal. */
  type?: EventType;
  /** The reporting service, e.g. "taint-manager" (`source.component` and `reportingComponent`). */
  component: string;
  /** `source.host` / `reportingInstance`, e.g. the hostname of the replica. */
  host?: string;
  now?: Date;
}

/** A core/v1 Event as Flotilla stores it. */
export interface KubeEvent extends KubeObject {
  involvedObject: InvolvedObject;
  reason: string;
  message: string;
  type: EventType;
  source: { component: string; host?: string };
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  reportingComponent: string;
  reportingInstance?: string;
}

function involvedOf(o: InvolvedObject | KubeObject): InvolvedObject {
  if ("metadata" in o && o.metadata && typeof o.metadata === "object") {
    const m = (o as KubeObject).metadata;
    return {
      apiVersion: o.apiVersion,
      kind: o.kind,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      name: m.name ?? "",
      ...(m.uid ? { uid: m.uid } : {}),
      ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
    };
  }
  return o as InvolvedObject;
}

/**
 * The event's name: the object's name plus a hash of what makes two events "the same" (object,
 * type, reason, message, component), so repeats of one event from any replica land on one
 * object and count up, like the Kubernetes event correlator's aggregation.
 */
export function eventName(io: InvolvedObject, type: EventType, reason: string, message: string, component: string): string {
  const h = createHash("sha256")
    .update(JSON.stringify([io.apiVersion, io.kind, io.namespace ?? "", io.name, io.uid ?? "", type, reason, message, component]))
    .digest("hex")
    .slice(0, 16);
  return `${io.name.slice(0, 253 - 17)}.${h}`;
}

/**
 * Records a Kubernetes-style Event (`v1 Event`, stored as `/Event`) about an object: created the
 * first time, then `count` + 1 and a new `lastTimestamp` for each repeat. Lists and watches
 * through the gateway at `/api/v1/namespaces/{ns}/events`. Throws on store errors; callers
 * that treat events as best-effort use `EventRecorder`.
 */
export async function recordEvent(store: ObjectStore, e: EventInput): Promise<KubeEvent> {
  const io = involvedOf(e.involvedObject);
  const type = e.type ?? "Normal";
  const ts = rfc3339(e.now ?? new Date());
  const namespace = io.namespace || "default";
  const name = eventName(io, type, e.reason, e.message, e.component);
  const ev: KubeEvent = {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name, namespace },
    involvedObject: io,
    reason: e.reason,
    message: e.message,
    type,
    source: { component: e.component, ...(e.host ? { host: e.host } : {}) },
    firstTimestamp: ts,
    lastTimestamp: ts,
    count: 1,
    reportingComponent: e.component,
    ...(e.host ? { reportingInstance: e.host } : {}),
  };
  try {
    return await store.create(ev);
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
  const updated = await store.mutate<KubeEvent>({ gk: GK.event, namespace, name }, (cur) => ({
    ...cur,
    involvedObject: io,
    count: (cur.count ?? 1) + 1,
    lastTimestamp: ts,
  }));
  return updated ?? store.create(ev);
}

export interface EventRecorderOptions {
  component: string;
  host?: string;
  now?: () => Date;
  onError?: (err: unknown, e: EventInput) => void;
  /**
   * Drop a repeat of the same event (same object, type, reason, message) recorded by this
   * recorder less than this many ms ago, instead of counting it up (default 0: count every
   * repeat). A spam filter for events a controller may repeat on every reconcile.
   */
  dedupeMs?: number;
}

/** Best-effort events for one component: never throws; failures go to `onError`. */
export class EventRecorder {
  private readonly recent = new Map<string, number>();

  constructor(
    private readonly store: ObjectStore,
    private readonly opts: EventRecorderOptions,
  ) {}

  async event(involvedObject: InvolvedObject | KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const now = this.opts.now?.() ?? new Date();
    const input: EventInput = { involvedObject, type, reason, message, component: this.opts.component, host: this.opts.host, now };
    if (this.opts.dedupeMs) {
      const io = involvedOf(involvedObject);
      const key = `${io.namespace ?? ""}/${eventName({ ...io, resourceVersion: undefined }, type, reason, message, this.opts.component)}`;
      const last = this.recent.get(key);
      if (last !== undefined && now.getTime() - last < this.opts.dedupeMs) return;
      if (this.recent.size >= 10_000) this.recent.clear();
      this.recent.set(key, now.getTime());
    }
    try {
      await recordEvent(this.store, input);
    } catch (err) {
      this.opts.onError?.(err, input);
    }
  }

  normal(o: InvolvedObject | KubeObject, reason: string, message: string): Promise<void> {
    return this.event(o, "Normal", reason, message);
  }

  warning(o: InvolvedObject | KubeObject, reason: string, message: string): Promise<void> {
    return this.event(o, "Warning", reason, message);
  }
}

/** The events about one object, oldest first (by lastTimestamp, then name). */
export async function listEventsFor(store: ObjectStore, o: InvolvedObject | KubeObject): Promise<KubeEvent[]> {
  const io = involvedOf(o);
  const { items } = await store.list<KubeEvent>(GK.event, { namespace: io.namespace || "default" });
  return items
    .filter((e) => e.involvedObject?.kind === io.kind && e.involvedObject?.name === io.name && (io.namespace ?? "") === (e.involvedObject?.namespace ?? ""))
    .sort((a, b) => (a.lastTimestamp < b.lastTimestamp ? -1 : a.lastTimestamp > b.lastTimestamp ? 1 : a.metadata.name! < b.metadata.name! ? -1 : 1));
}
