import * as grpc from "@grpc/grpc-js";
import { create, type JsonObject } from "@bufbuild/protobuf";
import {
  SchedulerService,
  SimulateFailureResponseSchema,
  SimulateResponseSchema,
  type SimulateFailureRequest,
  type SimulateFailureResponse,
  type SimulateRequest,
  type SimulateResponse,
} from "@flotilla/proto";
import { grpcServiceDefinition, statusServiceError } from "@flotilla/proto/grpc";
import { FlotillaError, InternalError, InvalidError, UnavailableError } from "@flotilla/api";
import type { Logger } from "@flotilla/log";

export const schedulerServiceDefinition = grpcServiceDefinition(SchedulerService);

/** A failure to reach Postgres (the cluster snapshot): the caller may try again. */
const connectionLost = (e: unknown): boolean => {
  const code = String((e as { code?: unknown } | null)?.code ?? "");
  return code === "ECONNREFUSED" || /connect|terminat|timeout/i.test(code);
};

/**
 * The gRPC error for a failure (see `FlotillaError`): INVALID_ARGUMENT for a bad simulation (the
 * Kubernetes Status the gateway answers with travels in the `k8s-status` metadata, naming every
 * bad field), UNAVAILABLE when the cluster snapshot cannot be read, the code of its reason for any
 * other FlotillaError (a scheduling failure, should one be thrown, is ABORTED: a binding that does
 * not fit is an answer of the Simulation, not a server fault), INTERNAL otherwise (no internals
 * exposed).
 */
export function toGrpcError(err: unknown): grpc.ServiceError {
  const e = connectionLost(err)
    ? new UnavailableError("the scheduler cannot read the clusters right now; try again", { cause: err })
    : err instanceof FlotillaError
      ? err
      : new InternalError("Internal error occurred: the simulation could not be completed", { cause: err });
  const status = e.toStatus();
  // an invalid simulation names its resource, as the gateway's routes for it do
  if (e instanceof InvalidError) status.details = { ...status.details, kind: e.ref.kind === "FailureSimulation" ? "failuresimulations" : "simulations" };
  return statusServiceError(e.code, status);
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
