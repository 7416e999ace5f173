import type { DescService } from "@bufbuild/protobuf";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import type { StatusJson } from "./gen/flotilla/meta/v1/meta_pb.js";

/**
 * Bridges a protobuf-es service descriptor to a grpc-js ServiceDefinition, so the
 * same generated descriptor drives both the server (`server.addService`) and the
 * client (`grpc.makeGenericClientConstructor`).
 */
export function grpcServiceDefinition(svc: DescService): grpc.ServiceDefinition {
  const def: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const m of svc.methods) {
    def[m.localName] = {
      path: `/${svc.typeName}/${m.name}`,
      requestStream: m.methodKind === "client_streaming" || m.methodKind === "bidi_streaming",
      responseStream: m.methodKind === "server_streaming" || m.methodKind === "bidi_streaming",
      requestSerialize: (x) => Buffer.from(toBinary(m.input, x as never)),
      requestDeserialize: (b: Buffer) => fromBinary(m.input, b),
      responseSerialize: (x) => Buffer.from(toBinary(m.output, x as never)),
      responseDeserialize: (b: Buffer) => fromBinary(m.output, b),
      originalName: m.localName,
    };
  }
  return def;
}

export type GrpcHandlers = grpc.UntypedServiceImplementation;

/** Printable ASCII only (grpc-js refuses anything else in metadata): other characters as \u escapes, which JSON reads back as they were. */
const ascii = (s: string) => s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
/** Messages are cut to this many characters in gRPC errors: they travel in headers, which have a size limit. */
const MAX_MESSAGE_CHARS = 512;
const MAX_CAUSES = 20;
const cut = (s: string | undefined) => (s && s.length > MAX_MESSAGE_CHARS ? `${s.slice(0, MAX_MESSAGE_CHARS)}… (truncated)` : s);

/**
 * The gRPC error for a failed call: the code, and the Kubernetes Status as JSON in the metadata
 * `k8s-status` (which the gateway passes on). Both travel in HTTP/2 headers, so the texts are
 * ASCII (escaped) and bounded (an echoed 3 MiB name would exceed every header limit and break
 * the connection).
 */
export function statusServiceError(code: grpc.status, status: StatusJson): grpc.ServiceError {
  const message = cut(status.message) ?? "";
  const causes = status.details?.causes?.slice(0, MAX_CAUSES).map((c) => ({ ...c, field: cut(c.field), message: cut(c.message) }));
  const body = { ...status, message, ...(status.details ? { details: { ...status.details, name: cut(status.details.name), ...(causes ? { causes } : {}) } } : {}) };
  const md = new grpc.Metadata();
  md.set("k8s-status", ascii(JSON.stringify(body)));
  return Object.assign(new Error(message), { code, details: ascii(message), metadata: md });
}
