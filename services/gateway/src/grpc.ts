import * as grpc from "@grpc/grpc-js";
import { create, fromJson, toJson, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import {
  ClusterOverridePolicySchema,
  ClusterTaintPolicySchema,
  ClusterPropagationPolicySchema,
  ClusterResourceBindingSchema,
  ClusterSchema,
  ListResponseSchema,
  ObjectSchema,
  ObjectService,
  OverridePolicySchema,
  PlacementChangeListSchema,
  PropagationPolicySchema,
  ResourceBindingSchema,
  WatchEventSchema,
  WorkSchema,
  type HistoryRequest,
  type ListRequest,
  type Object$,
  type ObjectKey,
} from "@flotilla/proto";
import { grpcServiceDefinition, statusServiceError } from "@flotilla/proto/grpc";
import { BadRequestError, FlotillaError, InvalidError, KARMADA, apiVersionOf, checkDocument, resourceByKind, type FieldError, type KubeObject, type ResourceType } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import { hasPlacementHistory } from "./logic/placement-history.js";
import { checkKey, checkParameters, type ObjectApi, type Scope } from "./objects.js";

const CASES: Record<string, { case: NonNullable<Object$["object"]["case"]>; schema: DescMessage; type: ResourceType }> = {
  Cluster: { case: "cluster", schema: ClusterSchema, type: KARMADA.cluster },
  PropagationPolicy: { case: "propagationPolicy", schema: PropagationPolicySchema, type: KARMADA.propagationPolicy },
  ClusterPropagationPolicy: { case: "clusterPropagationPolicy", schema: ClusterPropagationPolicySchema, type: KARMADA.clusterPropagationPolicy },
  OverridePolicy: { case: "overridePolicy", schema: OverridePolicySchema, type: KARMADA.overridePolicy },
  ClusterOverridePolicy: { case: "clusterOverridePolicy", schema: ClusterOverridePolicySchema, type: KARMADA.clusterOverridePolicy },
  ClusterTaintPolicy: { case: "clusterTaintPolicy", schema: ClusterTaintPolicySchema, type: KARMADA.clusterTaintPolicy },
  ResourceBinding: { case: "resourceBinding", schema: ResourceBindingSchema, type: KARMADA.resourceBinding },
  ClusterResourceBinding: { case: "clusterResourceBinding", schema: ClusterResourceBindingSchema, type: KARMADA.clusterResourceBinding },
  Work: { case: "work", schema: WorkSchema, type: KARMADA.work },
};

export function toProtoObject(o: KubeObject): Object$ {
  const c = CASES[o.kind];
  if (c) return create(ObjectSchema, { object: { case: c.case, value: fromJson(c.schema, o as unknown as JsonValue, { ignoreUnknownFields: true }) } as never });
  return create(ObjectSchema, { object: { case: "template", value: o as unknown as JsonObject } });
}

/**
 * The object of a Create or Update as Kubernetes JSON, checked like a REST body (checkDocument:
 * safe JSON data only), with `apiVersion` and `kind` strings naming a served kind and the
 * namespace and name strings: anything else is INVALID_ARGUMENT naming the field.
 */
export function fromProtoObject(o: Object$ | undefined): { object: KubeObject; scope: Scope } {
  const v = o?.object;
  if (!v?.case) throw new BadRequestError("object is required", [{ field: "object", reason: "FieldValueRequired", message: "set one of the object kinds" }]);
  const c = Object.values(CASES).find((x) => x.case === v.case);
  const obj = (v.case === "template" || !c ? v.value : toJson(c.schema, v.value as never)) as unknown as Record<string, unknown>;
  // a typed message names its kind by its case: apiVersion and kind may be left out
  if (c) {
    obj.apiVersion ||= apiVersionOf(c.type);
    obj.kind ||= c.type.kind;
  }
  const meta = obj.metadata as Record<string, unknown> | undefined;
  const name = typeof meta?.name === "string" ? meta.name : undefined;
  const ref = { group: "", kind: typeof obj.kind === "string" ? obj.kind : "", name };
  checkDocument(obj, ref);
  const errs: FieldError[] = [];
  for (const f of ["apiVersion", "kind"] as const) {
    if (typeof obj[f] !== "string" || obj[f] === "") errs.push({ field: f, reason: obj[f] === undefined ? "FieldValueRequired" : "FieldValueTypeInvalid", message: "must be a non-empty string" });
  }
  if (meta !== undefined && meta !== null && (typeof meta !== "object" || Array.isArray(meta))) errs.push({ field: "metadata", reason: "FieldValueTypeInvalid", message: "must be an object" });
  else {
    for (const f of ["namespace", "name"] as const) {
      if (meta?.[f] !== undefined && meta[f] !== null && typeof meta[f] !== "string") errs.push({ field: `metadata.${f}`, reason: "FieldValueTypeInvalid", message: "must be a string" });
    }
  }
  if (errs.length) throw new InvalidError(ref, errs);
  const object = obj as KubeObject;
  const scope = scopeOf({ apiVersion: object.apiVersion, kind: object.kind, namespace: object.metadata?.namespace ?? "", name: "" } as ObjectKey);
  return { object, scope };
}

/** The kind and namespace a request key names (INVALID_ARGUMENT for an unknown kind, NOT_FOUND for a name no object can have). */
function scopeOf(key: ObjectKey | undefined): Scope {
  const t = key && resourceByKind(key.apiVersion, key.kind);
  if (!t) throw new BadRequestError(`unknown kind ${JSON.stringify(key?.kind ?? "")} in ${JSON.stringify(key?.apiVersion ?? "")}`, [{ field: "key.kind", reason: "FieldValueNotSupported", message: "not a served kind" }]);
  const namespace = t.namespaced ? key.namespace : "";
  checkKey(t, namespace, key.name);
  return { type: t, namespace };
}


/** The gRPC error for an API error: its code, and its Kubernetes Status in the `k8s-status` metadata. */
function toGrpcError(e: unknown): grpc.ServiceError {
  const err = FlotillaError.from(e);
  return statusServiceError(err.code, err.toStatus());
}

/** A caller authenticated and within its request rate (CallGuard.authenticate). */
export interface Caller {
  /** Authorizes the verb on the scope and name as RBAC decides (else the 403 error); the API to use for the call. */
  authorize(verb: string, s: Scope, name?: string, subresource?: string): ObjectApi;
  /** Takes one of the user's open-watch slots, the ones its REST watches take too (else the 429 error); the result gives it back. */
  holdWatch(): () => void;
}

/**
 * The gRPC front's gatekeeping, the REST front's: `authenticate` (the `authorization` metadata
 * as the REST `Authorization` header) is the first thing a call does, before its request is
 * looked at, so that an anonymous caller learns nothing from the arguments it sends; `done`
 * audits the call when it is answered.
 */
export interface CallGuard {
  authenticate(call: GrpcCall, verb: string): Promise<Caller>;
  done(call: GrpcCall, err: unknown): void;
}

/** What the guard reads of a call: its metadata, its peer and its method. */
export type GrpcCall = Pick<grpc.ServerUnaryCall<unknown, unknown>, "metadata" | "getPeer" | "getPath">;

/** The ObjectService implementation over the same ObjectApi the REST routes use. */
export function objectServiceHandlers(log: Logger, guard: CallGuard): grpc.UntypedServiceImplementation {
  const unary = <Req, Res>(verb: string, fn: (req: Req, caller: Caller) => Promise<Res>) => (call: grpc.ServerUnaryCall<Req, Res>, cb: grpc.sendUnaryData<Res>) => {
    guard
      .authenticate(call, verb)
      .then((caller) => (rejectMalformed(call.request), fn(call.request, caller)))
      .then(
        (r) => (guard.done(call, undefined), cb(null, r)),
        (e) => {
          guard.done(call, e);
          const ge = toGrpcError(e);
          if (ge.code === grpc.status.INTERNAL) log.error({ err: e }, "grpc request failed");
          cb(ge);
        },
      )
      // a failure to answer (as a Metadata.set that threw once did) is logged, never an unhandled rejection that ends the process
      .catch((err: unknown) => log.error({ err }, "grpc answer failed"));
  };
  return {
    get: unary("get", async (req: { key?: ObjectKey }, caller) => {
      const s = scopeOf(req.key);
      return toProtoObject(await caller.authorize("get", s, req.key!.name).get(s, req.key!.name));
    }),
    list: unary("list", async (req: ListRequest, caller) => {
      checkParameters({ labelSelector: req.labelSelector, continue: req.continue });
      const s = scopeOf(req.key);
      const r = await caller.authorize("list", s).list(s, { labelSelector: req.labelSelector || undefined, limit: Number(req.limit), continue: req.continue || undefined });
      return create(ListResponseSchema, {
        resourceVersion: r.resourceVersion,
        items: r.items.map(toProtoObject),
        continue: r.continue ?? "",
        remainingItemCount: r.remainingItemCount === undefined ? undefined : BigInt(r.remainingItemCount),
      });
    }),
    history: unary("get", async (req: HistoryRequest, caller) => {
      const s = scopeOf(req.key);
      if (!hasPlacementHistory(s.type)) throw new BadRequestError(`${s.type.kind} has no placement history: only ResourceBinding and ClusterResourceBinding do`, [{ field: "key.kind", reason: "FieldValueNotSupported", message: "must be ResourceBinding or ClusterResourceBinding" }]);
      const list = await caller.authorize("get", s, req.key!.name, "history").history(s, req.key!.name, { limit: Number(req.limit) });
      return fromJson(PlacementChangeListSchema, list as unknown as JsonValue, { ignoreUnknownFields: true });
    }),
    create: unary("create", async (req: { object?: Object$ }, caller) => {
      const { object, scope } = fromProtoObject(req.object);
      return toProtoObject(await caller.authorize("create", scope).create(scope, object));
    }),
    update: unary("update", async (req: { object?: Object$; status: boolean }, caller) => {
      const { object, scope } = fromProtoObject(req.object);
      const name = object.metadata?.name ?? "";
      const sub = req.status ? "status" : undefined;
      return toProtoObject(await caller.authorize("update", scope, name, sub).update(scope, name, object, sub));
    }),
    delete: unary("delete", async (req: { key?: ObjectKey }, caller) => {
      const s = scopeOf(req.key);
      const o = (await caller.authorize("delete", s, req.key!.name).delete(s, req.key!.name)) ?? { apiVersion: req.key!.apiVersion, kind: req.key!.kind, metadata: { name: req.key!.name } };
      return toProtoObject(o);
    }),
    watch: (call: grpc.ServerWritableStream<{ key?: ObjectKey; labelSelector: string; resourceVersion: string }, unknown>) => {
      const ac = new AbortController();
      call.on("cancelled", () => ac.abort());
      call.on("close", () => ac.abort());
      (async () => {
        let release = () => {};
        try {
          const caller = await guard.authenticate(call, "watch");
          rejectMalformed(call.request);
          checkParameters({ labelSelector: call.request.labelSelector, resourceVersion: call.request.resourceVersion });
          const s = scopeOf(call.request.key);
          const name = call.request.key?.name;
          const api = caller.authorize("watch", s, name || undefined);
          release = caller.holdWatch();
          for await (const e of await api.watch(s, { labelSelector: call.request.labelSelector || undefined, resourceVersion: call.request.resourceVersion || undefined, signal: ac.signal })) {
            if (name && e.object.metadata.name !== name) continue;
            call.write(create(WatchEventSchema, { type: e.type, object: toProtoObject(e.object) }));
          }
          guard.done(call, undefined);
          call.end();
        } catch (e) {
          guard.done(call, e);
          // the stream's "error" event, not destroy(): grpc-js sends the status on it and ends the call, a destroyed stream never answers
          if (!ac.signal.aborted) call.emit("error", toGrpcError(e));
        } finally {
          release();
        }
      })().catch((err: unknown) => log.error({ err }, "grpc watch failed"));
    },
  };
}

/** A request whose bytes are not a valid message (answered INVALID_ARGUMENT, not grpc-js's INTERNAL). */
class MalformedRequest {
  constructor(readonly error: unknown) {}
}

/**
 * The ObjectService definition, with request decoding that never throws: grpc-js answers
 * INTERNAL to a deserializer's exception, so a malformed message is handed on as a
 * MalformedRequest and refused by the handler as INVALID_ARGUMENT.
 */
export const objectServiceDefinition: grpc.ServiceDefinition = Object.fromEntries(
  Object.entries(grpcServiceDefinition(ObjectService)).map(([name, m]) => [
    name,
    {
      ...m,
      requestDeserialize: (b: Buffer) => {
        try {
          return m.requestDeserialize(b);
        } catch (e) {
          return new MalformedRequest(e);
        }
      },
    },
  ]),
);

function rejectMalformed(req: unknown): void {
  if (req instanceof MalformedRequest) throw new BadRequestError("the request is not a valid protobuf message", [], { cause: req.error });
}
