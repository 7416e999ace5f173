import { randomUUID } from "node:crypto";
import {
  BadRequestError,
  ConflictError,
  InvalidError,
  NotFoundError,
  apiVersionOf,
  applyDefaults,
  checkDocument,
  decodeTyped,
  dropUnknownFields,
  groupKind,
  microTime,
  parseApiVersion,
  permanentIDLabel,
  schemaFor,
  stringProblem,
  validateObject,
  type KubeObject,
  type ResourceType,
} from "@flotilla/api";
import type { ListResult, ListStream, ObjectStore, WatchEvent } from "@flotilla/store";
import { applyPatch, jsonPatchErrors, type PatchType } from "./logic/patch.js";
import type { FieldValidation } from "./logic/field-validation.js";
import { hasPlacementHistory, placementHistoryList, type PlacementHistoryList } from "./logic/placement-history.js";

export interface AdmissionSettings {
  notReadyTolerationSeconds: number;
  unreachableTolerationSeconds: number;
  /** karmada-webhook's --allow-no-execute-taint-policy: ClusterTaintPolicies may set NoExecute taints (default false). */
  allowNoExecuteTaintPolicy?: boolean;
  /**
   * What a binding's placement history shows (PLACEMENT_HISTORY_RETENTION, _MAX_ENTRIES): changes
   * younger than `retentionMs`, at most the newest `maxEntries` (0: no bound). Default: all kept.
   */
  placementHistory?: { retentionMs: number; maxEntries: number };
  /**
   * CLUSTER_RESOURCE_MODELING_DEFAULTS (Karmada's CustomizedClusterResourceModeling gate): a
   * Cluster created without `spec.resourceModels` gets upstream's nine default grades (default false).
   */
  clusterResourceModelingDefaults?: boolean;
}

export interface Scope {
  type: ResourceType;
  /** '' for cluster-scoped kinds, or for namespaced kinds across all namespaces (list/watch only). */
  namespace: string;
}

/** Refuses (throws) an object a request would write. */
export type WriteCheck = (s: Scope, obj: KubeObject) => void;

/** A list request's options (Kubernetes' ListOptions): `limit` 0 or absent = the whole list. */
export interface ListQuery {
  labelSelector?: string;
  limit?: number;
  continue?: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The namespace and name a request addresses (URL segments, a gRPC key), checked before anything
 * reads the store: one no object can have (a NUL, a lone surrogate: stringProblem) names nothing,
 * a 404 as for any absent object.
 */
export function checkKey(t: Pick<ResourceType, "group" | "kind">, namespace: string, name?: string): void {
  if (namespace && stringProblem(namespace)) throw new NotFoundError({ group: "", kind: "namespaces", name: namespace });
  if (name && stringProblem(name)) throw new NotFoundError({ group: t.group, kind: t.kind, name });
}

/** Request parameters (a query, a gRPC request's strings): one the store could not take is a 400 naming it. */
export function checkParameters(params: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(params)) {
    for (const s of Array.isArray(v) ? v : [v]) {
      const why = typeof s === "string" ? stringProblem(s) : undefined;
      if (why) throw new BadRequestError(`the parameter ${JSON.stringify(k)} ${why}`, [{ field: k, reason: "FieldValueInvalid", message: `Invalid value: ${why}` }]);
    }
  }
}

/**
 * The API's operations on one kind, with admission (decode, defaults, validation) shared by
 * the REST and gRPC fronts, so both accept and reject exactly the same requests.
 */
export class ObjectApi {
  /** Runs on every object about to be created or updated, after admission (see withWriteCheck). */
  protected writeCheck?: WriteCheck;
  /** What admission does with unknown fields of the typed kinds (see withFieldValidation). */
  protected fieldValidation: FieldValidation = "Strict";
  protected warn?: (text: string) => void;

  constructor(
    private readonly store: ObjectStore,
    private readonly settings: AdmissionSettings,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * This API for one request: `check` sees every object the request would write (a patch's
   * result included) and may refuse it by throwing, before anything is written.
   */
  withWriteCheck(check: WriteCheck): this {
    return Object.assign(Object.create(this) as this, { writeCheck: check });
  }

  /**
   * This API for one request with Kubernetes' `fieldValidation`: Strict (the default) refuses
   * unknown fields of the typed kinds (422 naming each), Warn drops them and passes each to
   * `warn` ('unknown field "spec.x"'), Ignore drops them.
   */
  withFieldValidation(directive: FieldValidation, warn?: (text: string) => void): this {
    return Object.assign(Object.create(this) as this, { fieldValidation: directive, warn });
  }

  get(s: Scope, name: string): Promise<KubeObject> {
    return this.store.mustGet({ gk: groupKind(s.type), namespace: s.namespace, name });
  }

  /** One page with `limit` (see ListResult in @flotilla/store), else the whole list in memory. */
  list(s: Scope, q: ListQuery = {}): Promise<ListResult<KubeObject>> {
    return this.store.list(groupKind(s.type), { namespace: s.namespace || undefined, ...q });
  }

  /** The whole list (or the rest after `continue`), read a batch at a time while it is iterated. */
  listStream(s: Scope, q: Omit<ListQuery, "limit"> = {}): Promise<ListStream<KubeObject>> {
    return this.store.listStream(groupKind(s.type), { namespace: s.namespace || undefined, labelSelector: q.labelSelector, continue: q.continue });
  }

  watch(s: Scope, opts: { labelSelector?: string; resourceVersion?: string; signal?: AbortSignal }): Promise<AsyncGenerator<WatchEvent>> {
    return this.store.watch(groupKind(s.type), { namespace: s.namespace || undefined, ...opts });
  }

  async create(s: Scope, body: unknown): Promise<KubeObject> {
    let obj = this.envelope(s, body, undefined);
    if (s.type.statusSubresource) delete obj.status;
    obj = this.admit(s.type, obj, { create: true });
    this.writeCheck?.(s, obj);
    return this.store.create(obj);
  }

  /** PUT: the whole object (status kept), or only the status with `subresource: "status"`. */
  async update(s: Scope, name: string, body: unknown, subresource?: "status"): Promise<KubeObject> {
    let obj = this.envelope(s, body, name);
    const current = await this.get(s, name);
    if (subresource) {
      // only the status is taken from the request (none clears it); it is checked as part of the stored object
      const { status: _stored, ...rest } = current;
      obj = this.admit(s.type, { ...rest, ...(obj.status === undefined ? {} : { status: obj.status }), metadata: { ...current.metadata, resourceVersion: obj.metadata.resourceVersion ?? "" } }, { statusOnly: true });
      return this.store.updateStatus(obj);
    }
    const idLabel = permanentIDLabel(s.type.kind);
    const keptId = idLabel && current.metadata.labels?.[idLabel];
    if (idLabel && keptId && !obj.metadata.labels?.[idLabel]) {
      // the permanent id is set once, on create, and survives updates that leave it out
      obj.metadata = { ...obj.metadata, labels: { ...(obj.metadata.labels ?? {}), [idLabel]: keptId } };
    }
    obj = this.admit(s.type, obj);
    this.writeCheck?.(s, obj);
    return this.store.update(obj);
  }

  /**
   * PATCH: applied to the stored object (as patchBase shows it) and written with its
   * resourceVersion, retried on a concurrent write unless the patch itself names a
   * resourceVersion. Apply patches create. The patch document reaches here decoded (no forbidden
   * keys, bounded depth); a JSON patch's operations are checked before anything is read, and the
   * patched object is checked again (patching can nest deeper than either document).
   */
  async patch(s: Scope, name: string, type: PatchType, patch: unknown, subresource?: "status"): Promise<KubeObject> {
    if (type === "json" ? !Array.isArray(patch) : !isObj(patch)) throw new BadRequestError(type === "json" ? "a JSON patch must be an array of operations" : "the patch must be a JSON object");
    const ref = { group: s.type.group, kind: s.type.kind, name };
    const opErrors = type === "json" ? jsonPatchErrors(patch) : [];
    if (opErrors.length) throw new InvalidError(ref, opErrors);
    const gk = groupKind(s.type);
    for (let attempt = 0; ; attempt++) {
      const cur = await this.store.get({ gk, namespace: s.namespace, name });
      if (!cur) {
        if (type === "apply") return this.create(s, patch);
        return this.store.mustGet({ gk, namespace: s.namespace, name });
      }
      const patched = applyPatch(type, this.patchBase(s, cur), patch);
      if (!isObj(patched)) throw new BadRequestError("the patch did not produce an object");
      checkDocument(patched, ref);
      const pinned = isObj(patch) && isObj(patch.metadata) && typeof patch.metadata.resourceVersion === "string";
      const meta = isObj(patched.metadata) ? patched.metadata : {};
      if (!pinned) patched.metadata = { ...meta, resourceVersion: cur.metadata.resourceVersion ?? "" };
      try {
        return await this.update(s, name, patched, subresource);
      } catch (e) {
        if (!(e instanceof ConflictError) || pinned || attempt >= 5) throw e;
      }
    }
  }

  /** The object a patch applies to: the stored one (GuardedObjectApi shows a Secret without its values). */
  protected patchBase(_s: Scope, stored: KubeObject): KubeObject {
    return stored;
  }

  /**
   * The binding's placement changes, oldest first (the newest `limit`, 0 or absent: all the
   * history keeps): a PlacementChangeList. NotFoundError for a kind without history or no such
   * binding; a `limit` that is not a non-negative integer is an InvalidError naming it.
   */
  async history(s: Scope, name: string, q: { limit?: number } = {}): Promise<PlacementHistoryList> {
    if (!hasPlacementHistory(s.type)) throw new NotFoundError({ group: s.type.group, kind: `${s.type.kind}/history`, name });
    if (q.limit !== undefined && (!Number.isSafeInteger(q.limit) || q.limit < 0)) {
      throw new InvalidError({ group: "meta.k8s.io", kind: "ListOptions" }, [{ field: "limit", reason: "FieldValueInvalid", message: "must be a non-negative integer" }]);
    }
    const kept = this.settings.placementHistory;
    const max = kept?.maxEntries ?? 0;
    const limit = q.limit && max ? Math.min(q.limit, max) : q.limit || max;
    const r = await this.store.placementHistory({ gk: groupKind(s.type), namespace: s.namespace, name }, { limit, maxAgeMs: kept?.retentionMs ?? 0 });
    return placementHistoryList(s.type, { namespace: s.namespace, name, uid: r.uid }, r.records.map((x) => ({ ...x, time: microTime(x.time) })));
  }

  /** This API for one request on behalf of `user`: its writes are recorded as the user's (e.g. in a binding's placement history). */
  asUser(user: string): this {
    return Object.assign(Object.create(this) as this, { store: this.store.as(`user:${user}`) });
  }

  delete(s: Scope, name: string, preconditions: { resourceVersion?: string; uid?: string } = {}): Promise<KubeObject | undefined> {
    return this.store.delete({ gk: groupKind(s.type), namespace: s.namespace, name }, preconditions);
  }

  /** Checks the body against the URL (kind, namespace, name) and fills what the URL implies. */
  private envelope(s: Scope, body: unknown, name: string | undefined): KubeObject {
    if (!isObj(body)) throw new BadRequestError("the request body must be a Kubernetes object");
    const t = s.type;
    const apiVersion = typeof body.apiVersion === "string" ? body.apiVersion : apiVersionOf(t);
    const kind = typeof body.kind === "string" ? body.kind : t.kind;
    if (kind !== t.kind || parseApiVersion(apiVersion).group !== t.group) {
      throw new BadRequestError(`the body is a ${kind} (${apiVersion}) but the URL is for ${t.kind} (${apiVersionOf(t)})`, [
        { field: "kind", reason: "FieldValueInvalid", message: `must be ${t.kind}` },
      ]);
    }
    if (body.metadata !== undefined && body.metadata !== null && !isObj(body.metadata)) {
      throw new InvalidError({ group: t.group, kind: t.kind, name }, [{ field: "metadata", reason: "FieldValueTypeInvalid", message: "Invalid value: must be of type object" }]);
    }
    const metadata = isObj(body.metadata) ? { ...body.metadata } : {};
    if (t.namespaced) {
      if (metadata.namespace === undefined || metadata.namespace === "") metadata.namespace = s.namespace;
      else if (metadata.namespace !== s.namespace) {
        throw new BadRequestError("the namespace of the provided object does not match the namespace sent on the request", [
          { field: "metadata.namespace", reason: "FieldValueInvalid", message: `must be ${s.namespace}` },
        ]);
      }
    }
    if (name !== undefined) {
      if (metadata.name === undefined || metadata.name === "") metadata.name = name;
      else if (metadata.name !== name) {
        throw new BadRequestError("the name of the object does not match the name on the URL", [
          { field: "metadata.name", reason: "FieldValueInvalid", message: `must be ${name}` },
        ]);
      }
    }
    return { ...body, apiVersion, kind, metadata } as KubeObject;
  }

  /**
   * Decode strictly (typed kinds; unknown fields dropped first unless fieldValidation is Strict),
   * default like Karmada's webhooks (a status write: none; some defaults, such as a Cluster's
   * default resource models, only on create), then validate.
   */
  private admit(t: ResourceType, obj: KubeObject, o: { statusOnly?: boolean; create?: boolean } = {}): KubeObject {
    const statusOnly = o.statusOnly ?? false;
    const schema = schemaFor(t);
    if (schema && this.fieldValidation !== "Strict") {
      const { value, dropped } = dropUnknownFields(schema, obj);
      if (this.fieldValidation === "Warn") for (const p of dropped) this.warn?.(`unknown field "${p}"`);
      obj = value as KubeObject;
    }
    let out = schema ? decodeTyped(t, obj) : obj;
    if (!statusOnly) {
      out = applyDefaults(out, {
        now: this.now(),
        uuid: randomUUID,
        notReadyTolerationSeconds: this.settings.notReadyTolerationSeconds,
        unreachableTolerationSeconds: this.settings.unreachableTolerationSeconds,
        defaultClusterResourceModels: (o.create ?? false) && (this.settings.clusterResourceModelingDefaults ?? false),
      });
    }
    validateObject(t, out, { allowNoExecuteTaintPolicy: this.settings.allowNoExecuteTaintPolicy ?? false });
    return out;
  }
}
