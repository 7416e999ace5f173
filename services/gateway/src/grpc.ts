import * as grpc from "@grpc/grpc-js";
import { create, fromJson, toJson, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import {
  ClusterPropagationPolicySchema,
  ClusterResourceBindingSchema,
  ClusterSchema,
  ListResponseSchema,
  ObjectSchema,
  ObjectService,
  PropagationPolicySchema,
  ResourceBindingSchema,
  WatchEventSchema,
  WorkSchema,
  grpcServiceDefinition,
  type ListRequest,
  type Object$,
  type ObjectKey,
} from "@flotilla/proto";
import { BadRequestError, resourceByKind, type KubeObject } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import { toHttpError } from "./logic/status.js";
import type { ObjectApi, Scope } from "./objects.js";

const CASES: Record<string, { case: NonNullable<Object$["object"]["case"]>; schema: DescMessage }> = {
  Cluster: { case: "cluster", schema: ClusterSchema },
  PropagationPolicy: { case: "propagationPolicy", schema: PropagationPolicySchema },
  ClusterPropagationPolicy: { case: "clusterPropagationPolicy", schema: ClusterPropagationPolicySchema },
  ResourceBinding: { case: "resourceBinding", schema: ResourceBindingSchema },
  ClusterResourceBinding: { case: "clusterResourceBinding", schema: ClusterResourceBindingSchema },
  Work: { case: "work", schema: WorkSchema },
};

export function toProtoObject(o: KubeObject): Object$ {
  const c = CASES[o.kind];
  if (c) return create(ObjectSchema, { object: { case: c.case, value: fromJson(c.schema, o as unknown as JsonValue, { ignoreUnknownFields: true }) } as never });
  return create(ObjectSchema, { object: { case: "template", value: o as unknown as JsonObject } });
}

export function fromProtoObject(o: Object$ | undefined): KubeObject {
  const v = o?.object;
  if (!v?.case) throw new BadRequestError("object is required", [{ field: "object", reason: "FieldValueRequired", message: "set one of the object kinds" }]);
  if (v.case === "template") return v.value as unknown as KubeObject;
  const c = Object.values(CASES).find((x) => x.case === v.case)!;
  return toJson(c.schema, v.value as never) as unknown as KubeObject;
}

function scopeOf(key: ObjectKey | undefined): Scope {
  const t = key && resourceByKind(key.apiVersion, key.kind);
  if (!t) throw new BadRequestError(`unknown kind ${JSON.stringify(key?.kind ?? "")} in ${JSON.stringify(key?.apiVersion ?? "")}`, [{ field: "key.kind", reason: "FieldValueNotSupported", message: "not a served kind" }]);
  return { type: t, namespace: t.namespaced ? key.namespace : "" };
}

const GRPC_CODES: Record<number, grpc.status> = {
  400: grpc.status.INVALID_ARGUMENT,
  404: grpc.status.NOT_FOUND,
  405: grpc.status.UNIMPLEMENTED,
  409: grpc.status.ALREADY_EXISTS,
  410: grpc.status.OUT_OF_RANGE,
  415: grpc.status.INVALID_ARGUMENT,
  422: grpc.status.INVALID_ARGUMENT,
  503: grpc.status.UNAVAILABLE,
};

/** The gRPC error for an API error: the code, plus the Kubernetes Status JSON in metadata `status-bin`… kept as text. */
function toGrpcError(e: unknown): grpc.ServiceError {
  const h = toHttpError(e);
  const code = h.body.reason === "Conflict" ? grpc.status.ABORTED : (GRPC_CODES[h.code] ?? grpc.status.INTERNAL);
  const md = new grpc.Metadata();
  md.set("k8s-status", JSON.stringify(h.body));
  return Object.assign(new Error(h.body.message ?? ""), { code, details: h.body.message ?? "", metadata: md });
}

/** The ObjectService implementation over the same ObjectApi the REST routes use. */
export function objectServiceHandlers(api: ObjectApi, log: Logger): grpc.UntypedServiceImplementation {
  const unary = <Req, Res>(fn: (req: Req) => Promise<Res>) => (call: grpc.ServerUnaryCall<Req, Res>, cb: grpc.sendUnaryData<Res>) => {
    fn(call.request).then(
      (r) => cb(null, r),
      (e) => {
        const ge = toGrpcError(e);
        if (ge.code === grpc.status.INTERNAL) log.error({ err: e }, "grpc request failed");
        cb(ge);
      },
    );
  };
  return {
    get: unary(async (req: { key?: ObjectKey }) => toProtoObject(await api.get(scopeOf(req.key), req.key!.name))),
    list: unary(async (req: ListRequest) => {
      const r = await api.list(scopeOf(req.key), { labelSelector: req.labelSelector || undefined, limit: Number(req.limit), continue: req.continue || undefined });
      return create(ListResponseSchema, {
        resourceVersion: r.resourceVersion,
        items: r.items.map(toProtoObject),
        continue: r.continue ?? "",
        remainingItemCount: r.remainingItemCount === undefined ? undefined : BigInt(r.remainingItemCount),
      });
    }),
    create: unary(async (req: { object?: Object$ }) => {
      const o = fromProtoObject(req.object);
      const s = scopeOf({ apiVersion: o.apiVersion, kind: o.kind, namespace: o.metadata?.namespace ?? "", name: "" } as ObjectKey);
      return toProtoObject(await api.create(s, o));
    }),
    update: unary(async (req: { object?: Object$; status: boolean }) => {
      const o = fromProtoObject(req.object);
      const s = scopeOf({ apiVersion: o.apiVersion, kind: o.kind, namespace: o.metadata?.namespace ?? "", name: "" } as ObjectKey);
      return toProtoObject(await api.update(s, o.metadata?.name ?? "", o, req.status ? "status" : undefined));
    }),
    delete: unary(async (req: { key?: ObjectKey }) => {
      const s = scopeOf(req.key);
      const o = (await api.delete(s, req.key!.name)) ?? { apiVersion: req.key!.apiVersion, kind: req.key!.kind, metadata: { name: req.key!.name } };
      return toProtoObject(o);
    }),
    watch: (call: grpc.ServerWritableStream<{ key?: ObjectKey; labelSelector: string; resourceVersion: string }, unknown>) => {
      const ac = new AbortController();
      call.on("cancelled", () => ac.abort());
      call.on("close", () => ac.abort());
      void (async () => {
        try {
          const s = scopeOf(call.request.key);
          const name = call.request.key?.name;
          for await (const e of await api.watch(s, { labelSelector: call.request.labelSelector || undefined, resourceVersion: call.request.resourceVersion || undefined, signal: ac.signal })) {
            if (name && e.object.metadata.name !== name) continue;
            call.write(create(WatchEventSchema, { type: e.type, object: toProtoObject(e.object) }));
          }
          call.end();
        } catch (e) {
          call.destroy(toGrpcError(e));
        }
      })();
    },
  };
}

export const objectServiceDefinition = grpcServiceDefinition(ObjectService);
