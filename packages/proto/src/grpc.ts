import type { DescService } from "@bufbuild/protobuf";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import type * as grpc from "@grpc/grpc-js";

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
