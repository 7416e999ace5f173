import * as grpc from "@grpc/grpc-js";
import { create, type JsonObject } from "@bufbuild/protobuf";
import {
  SchedulerService,
  SimulateFailureResponseSchema,
  SimulateResponseSchema,
  grpcServiceDefinition,
  type SimulateFailureRequest,
  type SimulateFailureResponse,
  type SimulateRequest,
  type SimulateResponse,
} from "@flotilla/proto";
import type { Logger } from "@flotilla/log";

export const schedulerServiceDefinition = grpcServiceDefinition(SchedulerService);

type Named = Error & { ref?: { group: string; kind: string; name?: string }; causes?: Array<{ field: string; reason: string; message: string }> };

/**
 * The gRPC error for a failure: INVALID_ARGUMENT for a bad simulation (the Kubernetes Status the
 * gateway answers with travels in the `k8s-status` metadata, naming every bad field),
 * UNAVAILABLE when the cluster snapshot cannot be read, INTERNAL otherwise (no internals exposed).
 */
export function toGrpcError(err: unknown): grpc.ServiceError {
  const e = err as Named;
  const md = new grpc.Metadata();
  const fail = (code: grpc.status, httpCode: number, reason: string, message: string, details?: Record<string, unknown>) => {
    md.set("k8s-status", JSON.stringify({ apiVersion: "v1", kind: "Status", metadata: {}, status: "Failure", message, reason, ...(details ? { details } : {}), code: httpCode }));
    return Object.assign(new Error(message), { code, details: message, metadata: md });
  };
  const causes = e?.causes?.map((c) => ({ reason: c.reason, message: c.message, field: c.field }));
  switch (e?.name) {
    case "InvalidError":
      return fail(grpc.status.INVALID_ARGUMENT, 422, "Invalid", e.message, { name: e.ref?.name, group: e.ref?.group, kind: e.ref?.kind === "FailureSimulation" ? "failuresimulations" : "simulations", causes });
    case "BadRequestError":
      return fail(grpc.status.INVALID_ARGUMENT, 400, "BadRequest", e.message, causes?.length ? { causes } : undefined);
    default:
      if (e?.name === "UnavailableError" || (e as { code?: string })?.code === "ECONNREFUSED" || /connect|terminat|timeout/i.test(String((e as { code?: string })?.code ?? ""))) {
        return fail(grpc.status.UNAVAILABLE, 503, "ServiceUnavailable", "the scheduler cannot read the clusters right now; try again");
      }
      return fail(grpc.status.INTERNAL, 500, "InternalError", "Internal error occurred: the simulation could not be completed");
  }
}

type Simulator = (body: unknown) => Promise<Record<string, unknown>>;

/** SchedulerService over the simulators. */
export function schedulerServiceHandlers(simulate: Simulator, log: Logger, simulateFailure: Simulator): grpc.UntypedServiceImplementation {
  return {
    simulateFailure(call: grpc.ServerUnaryCall<SimulateFailureRequest, SimulateFailureResponse>, cb: grpc.sendUnaryData<SimulateFailureResponse>) {
      simulateFailure(call.request.simulation).then(
        (out) => cb(null, create(SimulateFailureResponseSchema, { simulation: JSON.parse(JSON.stringify(out)) as JsonObject })),
        (e) => {
          const ge = toGrpcError(e);
          if (ge.code === grpc.status.INTERNAL || ge.code === grpc.status.UNAVAILABLE) log.error({ err: e }, "failure simulation failed");
          cb(ge);
        },
      );
    },
    simulate(call: grpc.ServerUnaryCall<SimulateRequest, SimulateResponse>, cb: grpc.sendUnaryData<SimulateResponse>) {
      simulate(call.request.simulation).then(
        (out) => cb(null, create(SimulateResponseSchema, { simulation: JSON.parse(JSON.stringify(out)) as JsonObject })),
        (e) => {
          const ge = toGrpcError(e);
          if (ge.code === grpc.status.INTERNAL || ge.code === grpc.status.UNAVAILABLE) log.error({ err: e }, "simulation failed");
          cb(ge);
        },
      );
    },
  };
}
