import { isJsonObject, jsonEqual, mergePatch, rfc3339, type Json } from "@flotilla/api";
import { randomUUID } from "node:crypto";
import { groupVersion, NAMESPACE, type ApiResource } from "./api-catalog.js";
import { applyConfiguration } from "./merge-patch.js";
import { alreadyExists, badRequest, conflict, invalid, notFound } from "./status.js";

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  generateName?: string;
  uid: string;
  resourceVersion: string;
  generation: number;
  creationTimestamp: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
}

/** A stored object. `spec` and `status` are free-form JSON. */
export interface KObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec?: any;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  status?: any;
  [k: string]: unknown;
}

export type EventType = "ADDED" | "MODIFIED" | "DELETED";

/** One change, as a watch streams it. `rv` is the store's revision after the change. */
export interface StoreEvent {
  type: EventType;
  resource: ApiResource;
  object: KObject;
  rv: number;
}

/** Write options. `internal` writes come from the simulator's own controllers and may set status. */
export interface WriteOptions {
  subresource?: "status";
  internal?: boolean;
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
}

interface Entry {
  obj: KObject;
  /** Server-side apply: the last configuration each field manager applied. */
  applied?: Map<string, Json>;
}

type Bucket = Map<string, Map<string, Entry>>; // namespace ("" when cluster-scoped) → name → entry

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const RANDOM_CHARS = "bcdfghjklmnpqrstvwxz2456789";

export function randomSuffix(n = 5): string {
  let s = "";
  for (let i = 0; i < n; i++) s += RANDOM_CHARS[Math.floor(Math.random() * RANDOM_CHARS.length)];
  return s;
}

const resourceKey = (r: ApiResource) => `${r.group}/${r.plural}`;

/** Everything but metadata and status: a change here bumps `generation`. */
function sameContent(a: KObject, b: KObject): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    if (k === "metadata" || k === "status" || k === "apiVersion" || k === "kind") continue;
    if (!jsonEqual(a[k], b[k])) return false;
  }
  return true;
}

function sameIgnoringVersion(a: KObject, b: KObject): boolean {
  return jsonEqual({ ...a, metadata: { ...a.metadata, resourceVersion: "" } }, { ...b, metadata: { ...b.metadata, resourceVersion: "" } });
}

/**
 * One cluster's objects, in memory: plain Maps, a revision counter for resourceVersion and a short
 * history of changes for watches. Stored objects are never modified in place; every write stores a
 * new object, so references handed out stay consistent snapshots (callers must not modify them).
 */
export class ObjectStore {
  private rv = 0;
  private readonly buckets = new Map<string, { resource: ApiResource; objects: Bucket }>();
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  private history: StoreEvent[] = [];

  constructor(private readonly historySize = 1000) {}

  /** The store's current revision. */
  get revision(): number {
    return this.rv;
  }

  subscribe(fn: (e: StoreEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The changes after `rv`, or undefined when they are older than the kept history. */
  eventsSince(rv: number): StoreEvent[] | undefined {
    if (rv >= this.rv) return [];
    const first = this.history[0];
    if (!first || first.rv > rv + 1) return undefined;
    return this.history.filter((e) => e.rv > rv);
  }

  get(res: ApiResource, ns: string, name: string): KObject | undefined {
    return this.entry(res, ns, name)?.obj;
  }

  /** Objects of a resource, in one namespace or (ns undefined) in all. */
  list(res: ApiResource, ns?: string, filter?: (o: KObject) => boolean): KObject[] {
    const b = this.buckets.get(resourceKey(res))?.objects;
    if (!b) return [];
    const out: KObject[] = [];
    const scan = (m: Map<string, Entry> | undefined) => {
      if (!m) return;
      for (const e of m.values()) if (!filter || filter(e.obj)) out.push(e.obj);
    };
    if (ns === undefined) for (const m of b.values()) scan(m);
    else scan(b.get(res.namespaced ? ns : ""));
    return out;
  }

  /** Every stored object with its resource. */
  *all(): Generator<{ resource: ApiResource; object: KObject }> {
    for (const { resource, objects } of this.buckets.values()) {
      for (const m of objects.values()) for (const e of m.values()) yield { resource, object: e.obj };
    }
  }

  count(): number {
    let n = 0;
    for (const { objects } of this.buckets.values()) for (const m of objects.values()) n += m.size;
    return n;
  }

  create(res: ApiResource, ns: string, body: unknown, opts: WriteOptions = {}): KObject {
    const obj = this.checkBody(res, ns, body);
    const meta = obj.metadata as Partial<ObjectMeta>;
    let name = meta.name;
    if (!name && meta.generateName) {
      do name = meta.generateName + randomSuffix();
      while (this.entry(res, ns, name));
    }
    this.checkName(res, name);
    if (this.entry(res, ns, name)) throw alreadyExists(res, name);
    return this.insert(res, ns, name, obj, opts);
  }

  /** PUT: replaces the object (or only its status). A resourceVersion in the body must be current. */
  replace(res: ApiResource, ns: string, name: string, body: unknown, opts: WriteOptions = {}): KObject {
    const obj = this.checkBody(res, ns, body);
    const cur = this.entry(res, ns, name);
    if (!cur) throw notFound(res, name);
    if (obj.metadata.name !== undefined && obj.metadata.name !== name) {
      throw badRequest(`the name of the object (${String(obj.metadata.name)}) does not match the name on the URL (${name})`);
    }
    this.checkVersion(res, cur.obj, obj.metadata.resourceVersion);
    return this.update(res, ns, cur, obj, opts, cur.applied);
  }

  /** JSON merge patch (strategic merge patch is treated the same). */
  patch(res: ApiResource, ns: string, name: string, patch: unknown, opts: WriteOptions = {}): KObject {
    if (!isJsonObject(patch)) throw badRequest("a merge patch must be a JSON object");
    const cur = this.entry(res, ns, name);
    if (!cur) throw notFound(res, name);
    const pm = isJsonObject(patch.metadata) ? patch.metadata : {};
    this.checkVersion(res, cur.obj, pm.resourceVersion);
    const next = mergePatch(cur.obj, patch) as KObject;
    if (!isJsonObject(next.metadata) || next.metadata.name !== name) throw badRequest("a patch may not change metadata.name");
    return this.update(res, ns, cur, next, opts, cur.applied);
  }

  /**
   * Server-side apply: creates the object when missing, otherwise merges the configuration and
   * drops the fields this manager applied before and left out now. Managers never conflict.
   */
  apply(res: ApiResource, ns: string, name: string, body: unknown, fieldManager: string, opts: WriteOptions = {}): { object: KObject; created: boolean } {
    const obj = this.checkBody(res, ns, body);
    if (obj.metadata.name === undefined) obj.metadata.name = name;
    if (obj.metadata.name !== name) {
      throw badRequest(`the name of the object (${String(obj.metadata.name)}) does not match the name on the URL (${name})`);
    }
    const config = structuredClone(obj) as Json & KObject;
    delete (config.metadata as Partial<ObjectMeta>).resourceVersion;
    const cur = this.entry(res, ns, name);
    if (!cur) {
      this.checkName(res, name);
      const created = this.insert(res, ns, name, obj, opts, new Map([[fieldManager, config]]));
      return { object: created, created: true };
    }
    this.checkVersion(res, cur.obj, obj.metadata.resourceVersion);
    const next = applyConfiguration(cur.obj, cur.applied?.get(fieldManager), config) as KObject;
    const applied = new Map(cur.applied ?? []);
    applied.set(fieldManager, config);
    return { object: this.update(res, ns, cur, next, opts, applied), created: false };
  }

  /**
   * Deletes the object, or marks it with a deletionTimestamp while it still has finalizers
   * (it goes once an update removes the last one). Deleting a Namespace deletes its contents.
   */
  delete(res: ApiResource, ns: string, name: string, opts: DeleteOptions = {}): { object: KObject; finalizing: boolean } {
    const cur = this.entry(res, ns, name);
    if (!cur) throw notFound(res, name);
    const p = opts.preconditions;
    if (p?.uid && p.uid !== cur.obj.metadata.uid) {
      throw conflict(res, name, `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${cur.obj.metadata.uid}`);
    }
    if (p?.resourceVersion && p.resourceVersion !== cur.obj.metadata.resourceVersion) {
      throw conflict(res, name, `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${cur.obj.metadata.resourceVersion}`);
    }
    if (cur.obj.metadata.finalizers?.length) {
      if (cur.obj.metadata.deletionTimestamp) return { object: cur.obj, finalizing: true };
      const marked: KObject = {
        ...cur.obj,
        metadata: { ...cur.obj.metadata, deletionTimestamp: rfc3339(new Date()), deletionGracePeriodSeconds: 0, generation: cur.obj.metadata.generation + 1 },
      };
      return { object: this.commit(res, ns, name, marked, cur.applied, "MODIFIED"), finalizing: true };
    }
    return { object: this.remove(res, ns, name, cur.obj), finalizing: false };
  }

  deleteCollection(res: ApiResource, ns: string | undefined, filter?: (o: KObject) => boolean): KObject[] {
    return this.list(res, ns, filter).map((o) => this.delete(res, o.metadata.namespace ?? "", o.metadata.name).object);
  }

  /** Creates the Namespace object if it is missing (namespaced writes never fail for want of one). */
  ensureNamespace(ns: string): void {
    if (!ns || this.entry(NAMESPACE, "", ns)) return;
    this.insert(NAMESPACE, "", ns, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } as ObjectMeta, spec: { finalizers: ["kubernetes"] }, status: { phase: "Active" } }, { internal: true });
  }

  // ---------------------------------------------------------------------------------------------

  private entry(res: ApiResource, ns: string, name: string): Entry | undefined {
    return this.buckets.get(resourceKey(res))?.objects.get(res.namespaced ? ns : "")?.get(name);
  }

  private checkBody(res: ApiResource, ns: string, body: unknown): KObject {
    if (!isJsonObject(body)) throw badRequest(`the body of a ${res.kind} must be a JSON or YAML object`);
    const obj = structuredClone(body) as unknown as KObject;
    if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {} as ObjectMeta;
    if (!isJsonObject(obj.metadata)) throw badRequest("metadata must be an object");
    const gv = groupVersion(res);
    if (obj.kind !== undefined && obj.kind !== res.kind) {
      throw badRequest(`the kind of the object (${String(obj.kind)}) does not match the resource ${res.plural} (${res.kind})`);
    }
    if (obj.apiVersion !== undefined && obj.apiVersion !== gv) {
      throw badRequest(`the API version of the object (${String(obj.apiVersion)}) does not match the resource's (${gv})`);
    }
    const bodyNs = obj.metadata.namespace;
    if (res.namespaced && bodyNs !== undefined && bodyNs !== "" && bodyNs !== ns) {
      throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
    }
    return obj;
  }

  private checkName(res: ApiResource, name: string | undefined): asserts name is string {
    if (!name) throw invalid(res, "", [{ field: "metadata.name", reason: "FieldValueRequired", message: "Required value: name or generateName is required" }]);
    if (typeof name !== "string" || name.length > 253 || !NAME.test(name)) {
      throw invalid(res, String(name), [
        { field: "metadata.name", message: `Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character` },
      ]);
    }
  }

  private checkVersion(res: ApiResource, cur: KObject, rv: unknown): void {
    if (rv !== undefined && rv !== null && rv !== "" && String(rv) !== cur.metadata.resourceVersion) throw conflict(res, cur.metadata.name);
  }

  private insert(res: ApiResource, ns: string, name: string, obj: KObject, opts: WriteOptions, applied?: Map<string, Json>): KObject {
    if (res.namespaced) this.ensureNamespace(ns);
    const m = obj.metadata;
    const meta: ObjectMeta = {
      name,
      ...(res.namespaced ? { namespace: ns } : {}),
      ...(m.generateName ? { generateName: m.generateName } : {}),
      uid: randomUUID(),
      resourceVersion: "",
      generation: 1,
      creationTimestamp: rfc3339(new Date()),
      ...(m.labels ? { labels: m.labels } : {}),
      ...(m.annotations ? { annotations: m.annotations } : {}),
      ...(m.finalizers?.length ? { finalizers: m.finalizers } : {}),
      ...(m.ownerReferences ? { ownerReferences: m.ownerReferences } : {}),
    };
    const next: KObject = { ...obj, apiVersion: groupVersion(res), kind: res.kind, metadata: meta };
    if (res.statusSubresource && !opts.internal) delete next.status;
    return this.commit(res, ns, name, next, applied, "ADDED");
  }

  private update(res: ApiResource, ns: string, cur: Entry, body: KObject, opts: WriteOptions, applied: Map<string, Json> | undefined): KObject {
    const old = cur.obj;
    let next: KObject;
    if (opts.subresource === "status") {
      next = { ...old, status: body.status };
      if (next.status === undefined) delete next.status;
    } else {
      next = { ...body };
      if (res.statusSubresource && !opts.internal) {
        if (old.status === undefined) delete next.status;
        else next.status = old.status;
      }
    }
    const m = (opts.subresource === "status" ? old.metadata : next.metadata) as Partial<ObjectMeta>;
    const meta: ObjectMeta = {
      name: old.metadata.name,
      ...(res.namespaced ? { namespace: ns } : {}),
      ...(old.metadata.generateName ? { generateName: old.metadata.generateName } : {}),
      uid: old.metadata.uid,
      resourceVersion: old.metadata.resourceVersion,
      generation: old.metadata.generation,
      creationTimestamp: old.metadata.creationTimestamp,
      ...(old.metadata.deletionTimestamp ? { deletionTimestamp: old.metadata.deletionTimestamp, deletionGracePeriodSeconds: old.metadata.deletionGracePeriodSeconds ?? 0 } : {}),
      ...(m.labels ? { labels: m.labels } : {}),
      ...(m.annotations ? { annotations: m.annotations } : {}),
      ...(m.finalizers?.length ? { finalizers: m.finalizers } : {}),
      ...(m.ownerReferences ? { ownerReferences: m.ownerReferences } : {}),
    };
    next = { ...next, apiVersion: groupVersion(res), kind: res.kind, metadata: meta };
    if (!sameContent(old, next)) meta.generation = old.metadata.generation + 1;
    if (meta.deletionTimestamp && !meta.finalizers?.length) return this.remove(res, ns, meta.name, next);
    if (sameIgnoringVersion(old, next)) {
      if (applied !== cur.applied) cur.applied = applied;
      return old; // a no-op write changes nothing, not even resourceVersion
    }
    return this.commit(res, ns, meta.name, next, applied, "MODIFIED");
  }

  private commit(res: ApiResource, ns: string, name: string, obj: KObject, applied: Map<string, Json> | undefined, type: EventType): KObject {
    const rv = ++this.rv;
    obj.metadata.resourceVersion = String(rv);
    const key = resourceKey(res);
    let b = this.buckets.get(key);
    if (!b) this.buckets.set(key, (b = { resource: res, objects: new Map() }));
    const nsKey = res.namespaced ? ns : "";
    let m = b.objects.get(nsKey);
    if (!m) b.objects.set(nsKey, (m = new Map()));
    m.set(name, applied ? { obj, applied } : { obj });
    this.emit({ type, resource: res, object: obj, rv });
    return obj;
  }

  private remove(res: ApiResource, ns: string, name: string, last: KObject): KObject {
    const b = this.buckets.get(resourceKey(res));
    const nsKey = res.namespaced ? ns : "";
    const m = b?.objects.get(nsKey);
    m?.delete(name);
    if (m && m.size === 0) b!.objects.delete(nsKey);
    const rv = ++this.rv;
    const gone: KObject = { ...last, metadata: { ...last.metadata, resourceVersion: String(rv) } };
    this.emit({ type: "DELETED", resource: res, object: gone, rv });
    if (res === NAMESPACE || (res.group === "" && res.plural === "namespaces")) this.removeNamespaceContents(name);
    return gone;
  }

  private removeNamespaceContents(ns: string): void {
    for (const { resource, objects } of this.buckets.values()) {
      if (!resource.namespaced) continue;
      const m = objects.get(ns);
      if (!m) continue;
      for (const e of [...m.values()]) {
        // A controller reacting to an earlier removal may already have deleted this one.
        if (m.get(e.obj.metadata.name) === e) this.remove(resource, ns, e.obj.metadata.name, e.obj);
      }
    }
  }

  private emit(e: StoreEvent): void {
    this.history.push(e);
    if (this.history.length > this.historySize * 2) this.history = this.history.slice(-this.historySize);
    for (const fn of this.listeners) fn(e);
  }
}
