import * as grpc from "@grpc/grpc-js";
import { Code, ConnectError, createContextKey, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
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

type WatchRequest = { key?: ObjectKey; labelSelector: string; resourceVersion: string };

/**
 * ObjectService's unary methods over the same ObjectApi the REST routes use, each with the verb it
 * is authenticated under: one body per method, for the gRPC front (objectServiceHandlers) and the
 * Connect/gRPC-Web front (connectObjectService) alike.
 */
const UNARY: Record<string, { verb: string; run: (req: never, caller: Caller) => Promise<unknown> }> = {
  get: {
    verb: "get",
    run: async (req: { key?: ObjectKey }, caller: Caller) => {
      const s = scopeOf(req.key);
      return toProtoObject(await caller.authorize("get", s, req.key!.name).get(s, req.key!.name));
    },
  },
  list: {
    verb: "list",
    run: async (req: ListRequest, caller: Caller) => {
      checkParameters({ labelSelector: req.labelSelector, continue: req.continue });
      const s = scopeOf(req.key);
      const r = await caller.authorize("list", s).list(s, { labelSelector: req.labelSelector || undefined, limit: Number(req.limit), continue: req.continue || undefined });
      return create(ListResponseSchema, {
        resourceVersion: r.resourceVersion,
        items: r.items.map(toProtoObject),
        continue: r.continue ?? "",
        remainingItemCount: r.remainingItemCount === undefined ? undefined : BigInt(r.remainingItemCount),
      });
    },
  },
  history: {
    verb: "get",
    run: async (req: HistoryRequest, caller: Caller) => {
      const s = scopeOf(req.key);
      if (!hasPlacementHistory(s.type)) throw new BadRequestError(`${s.type.kind} has no placement history: only ResourceBinding and ClusterResourceBinding do`, [{ field: "key.kind", reason: "FieldValueNotSupported", message: "must be ResourceBinding or ClusterResourceBinding" }]);
      const list = await caller.authorize("get", s, req.key!.name, "history").history(s, req.key!.name, { limit: Number(req.limit) });
      return fromJson(PlacementChangeListSchema, list as unknown as JsonValue, { ignoreUnknownFields: true });
    },
  },
  create: {
    verb: "create",
    run: async (req: { object?: Object$ }, caller: Caller) => {
      const { object, scope } = fromProtoObject(req.object);
      return toProtoObject(await caller.authorize("create", scope).create(scope, object));
    },
  },
  update: {
    verb: "update",
    run: async (req: { object?: Object$; status: boolean }, caller: Caller) => {
      const { object, scope } = fromProtoObject(req.object);
      const name = object.metadata?.name ?? "";
      const sub = req.status ? "status" : undefined;
      return toProtoObject(await caller.authorize("update", scope, name, sub).update(scope, name, object, sub));
    },
  },
  delete: {
    verb: "delete",
    run: async (req: { key?: ObjectKey }, caller: Caller) => {
      const s = scopeOf(req.key);
      const o = (await caller.authorize("delete", s, req.key!.name).delete(s, req.key!.name)) ?? { apiVersion: req.key!.apiVersion, kind: req.key!.kind, metadata: { name: req.key!.name } };
      return toProtoObject(o);
    },
  },
};

/** A Watch's events for an authenticated caller: its arguments checked, RBAC's `watch`, one of the user's watch slots held until it ends. */
async function* watchEvents(req: WatchRequest, caller: Caller, signal: AbortSignal) {
  checkParameters({ labelSelector: req.labelSelector, resourceVersion: req.resourceVersion });
  const s = scopeOf(req.key);
  const name = req.key?.name;
  const api = caller.authorize("watch", s, name || undefined);
  const release = caller.holdWatch();
  try {
    for await (const e of await api.watch(s, { labelSelector: req.labelSelector || undefined, resourceVersion: req.resourceVersion || undefined, signal })) {
      if (name && e.object.metadata.name !== name) continue;
      yield create(WatchEventSchema, { type: e.type, object: toProtoObject(e.object) });
    }
  } finally {
    release();
  }
}

/** The ObjectService implementation over the same ObjectApi the REST routes use. */
export function objectServiceHandlers(log: Logger, guard: CallGuard): grpc.UntypedServiceImplementation {
  const unary =
    ({ verb, run }: (typeof UNARY)[string]) =>
    (call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      guard
        .authenticate(call, verb)
        .then((caller) => (rejectMalformed(call.request), run(call.request as never, caller)))
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
    ...Object.fromEntries(Object.entries(UNARY).map(([name, m]) => [name, unary(m)])),
    watch: (call: grpc.ServerWritableStream<WatchRequest, unknown>) => {
      const ac = new AbortController();
      call.on("cancelled", () => ac.abort());
      call.on("close", () => ac.abort());
      (async () => {
        try {
          const caller = await guard.authenticate(call, "watch");
          rejectMalformed(call.request);
          for await (const e of watchEvents(call.request, caller, ac.signal)) call.write(e);
          guard.done(call, undefined);
          call.end();
        } catch (e) {
          guard.done(call, e);
          // the stream's "error" event, not destroy(): grpc-js sends the status on it and ends the call, a destroyed stream never answers
          if (!ac.signal.aborted) call.emit("error", toGrpcError(e));
        }
      })().catch((err: unknown) => log.error({ err }, "grpc watch failed"));
    },
  };
}

/** The client address of a Connect call (set by the Connect front from the HTTP request). */
export const CONNECT_CLIENT = createContextKey<string>("", { description: "client address" });

/**
 * A Connect call as the guard reads a gRPC one: its `Authorization` header as the `authorization`
 * metadata (a value gRPC metadata cannot hold is no token), its client address as the peer, its
 * procedure as the path.
 */
function connectCall(ctx: HandlerContext): GrpcCall {
  const metadata = new grpc.Metadata();
  const authorization = ctx.requestHeader.get("authorization");
  try {
    if (authorization !== null) metadata.set("authorization", authorization);
  } catch {
    // not a legal metadata value: no token
  }
  const client = ctx.values.get(CONNECT_CLIENT);
  return { metadata, getPeer: () => `[${client}]:0`, getPath: () => `/${ctx.service.typeName}/${ctx.method.name}` };
}

/** The Connect error for an API error: the gRPC front's code and message, its Kubernetes Status in the `k8s-status` header (gRPC-Web: trailer). */
function toConnectError(e: unknown): ConnectError {
  const ge = toGrpcError(e);
  return new ConnectError(ge.details, ge.code as number as Code, { "k8s-status": String(ge.metadata.get("k8s-status")[0] ?? "") });
}

/**
 * ObjectService for @connectrpc/connect (the Connect protocol and gRPC-Web over HTTP, beside the
 * gRPC front): the same method bodies, the same guard (authenticated first, kept to the user's
 * rate and watch cap, authorized, audited), the same codes and `k8s-status` on errors.
 */
export function connectObjectService(log: Logger, guard: CallGuard): ServiceImpl<typeof ObjectService> {
  const unary =
    ({ verb, run }: (typeof UNARY)[string]) =>
    async (req: unknown, ctx: HandlerContext) => {
      const call = connectCall(ctx);
      try {
        const r = await run(req as never, await guard.authenticate(call, verb));
        guard.done(call, undefined);
        return r;
      } catch (e) {
        guard.done(call, e);
        const ce = toConnectError(e);
        if (ce.code === Code.Internal) log.error({ err: e }, "connect request failed");
        throw ce;
      }
    };
  return {
    ...Object.fromEntries(Object.entries(UNARY).map(([name, m]) => [name, unary(m)])),
    watch: async function* (req: WatchRequest, ctx: HandlerContext) {
      const call = connectCall(ctx);
      try {
        yield* watchEvents(req, await guard.authenticate(call, "watch"), ctx.signal);
        guard.done(call, undefined);
      } catch (e) {
        guard.done(call, e);
        if (!ctx.signal.aborted) throw toConnectError(e);
      }
    },
  } as unknown as ServiceImpl<typeof ObjectService>;
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
