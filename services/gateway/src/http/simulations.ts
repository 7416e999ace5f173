import * as grpc from "@grpc/grpc-js";
import { create, type JsonObject } from "@bufbuild/protobuf";
import type { FastifyInstance } from "fastify";
import {
  SchedulerService,
  SimulateFailureRequestSchema,
  SimulateRequestSchema,
  type SimulateFailureResponse,
  type SimulateResponse,
} from "@flotilla/proto";
import { grpcServiceDefinition } from "@flotilla/proto/grpc";
import type { KubeStatus } from "@flotilla/api";
import { toHttpError } from "../logic/status.js";
import { OBJECT_MEDIA_TYPES, readBody } from "./routes.js";

/** "Where would this binding go?": answered by the scheduler, writing nothing. */
export const SIMULATIONS_PATH = "/apis/scheduling.flotilla.io/v1alpha1/simulations";
/** "What would failing these clusters do?": answered by the scheduler, writing nothing. */
export const FAILURE_SIMULATIONS_PATH = "/apis/scheduling.flotilla.io/v1alpha1/failuresimulations";

/** The scheduler's Simulate and SimulateFailure APIs as the gateway uses them. */
export interface SimulationClient {
  /** Sends the Simulation object; resolves to it with `status`. Rejects with a grpc ServiceError. */
  simulate(simulation: JsonObject, o?: { deadlineMs?: number }): Promise<JsonObject>;
  /** Sends the FailureSimulation object; resolves to it with `status`. Rejects with a grpc ServiceError. */
  simulateFailure(simulation: JsonObject, o?: { deadlineMs?: number }): Promise<JsonObject>;
  close?(): void;
}

const SchedulerGrpcClient = grpc.makeGenericClientConstructor(grpcServiceDefinition(SchedulerService), "SchedulerService");
type Call<R> = (req: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r: R) => void) => void;

/**
 * A client of flotilla.scheduler.v1.SchedulerService at `address` (host:port) with `credentials`
 * (the scheduler takes TLS and a service account token only: callerCredentials of
 * @flotilla/auth); every call has a deadline (default 10 s).
 */
export function schedulerClient(address: string, credentials: grpc.ChannelCredentials, o: { deadlineMs?: number } = {}): SimulationClient {
  const client = new SchedulerGrpcClient(address, credentials) as unknown as grpc.Client & {
    simulate: Call<SimulateResponse>;
    simulateFailure: Call<SimulateFailureResponse>;
  };
  const deadline = (c: { deadlineMs?: number }) => new Date(Date.now() + (c.deadlineMs ?? o.deadlineMs ?? 10_000));
  return {
    simulate(simulation, c = {}) {
      return new Promise((resolve, reject) =>
        client.simulate(create(SimulateRequestSchema, { simulation }), new grpc.Metadata(), { deadline: deadline(c) }, (err, res) => (err ? reject(err) : resolve(res.simulation ?? {}))),
      );
    },
    simulateFailure(simulation, c = {}) {
      return new Promise((resolve, reject) =>
        client.simulateFailure(create(SimulateFailureRequestSchema, { simulation }), new grpc.Metadata(), { deadline: deadline(c) }, (err, res) => (err ? reject(err) : resolve(res.simulation ?? {}))),
      );
    },
    close: () => client.close(),
  };
}

function failure(code: number, reason: string, message: string, details?: KubeStatus["details"]): { code: number; body: KubeStatus } {
  return { code, body: { apiVersion: "v1", kind: "Status", metadata: {}, status: "Failure", message, reason, ...(details ? { details } : {}), code } };
}

/** Maps the scheduler's answer to a Status: its own Status for a bad request, 503 when it cannot be reached. */
function fromGrpc(e: grpc.ServiceError): { code: number; body: KubeStatus } {
  if (e.code === grpc.status.INVALID_ARGUMENT) {
    const raw = e.metadata?.get("k8s-status")[0];
    if (raw) {
      try {
        const body = JSON.parse(raw.toString()) as KubeStatus;
        if (typeof body.code === "number" && body.code >= 400 && body.code < 500) return { code: body.code, body };
      } catch {
        // fall through to a plain 400
      }
    }
    return failure(400, "BadRequest", e.details || "the simulation is not valid");
  }
  if (e.code === grpc.status.UNAVAILABLE || e.code === grpc.status.DEADLINE_EXCEEDED) {
    return failure(503, "ServiceUnavailable", "the scheduler is not reachable; try again later");
  }
  return failure(500, "InternalError", "Internal error occurred: the simulation could not be completed");
}

/**
 * POST /apis/scheduling.flotilla.io/v1alpha1/simulations (a Simulation) and .../failuresimulations
 * (a FailureSimulation): forwards the object (JSON or YAML) to the scheduler over gRPC and answers
 * 200 with the same object and its `status`. Malformed bodies are 400; a simulation the scheduler
 * rejects is the 422 (or 400) Status it names the fields in; no scheduler (not configured,
 * unreachable, or past the deadline) is 503.
 */
export function registerSimulationRoutes(app: FastifyInstance, client: SimulationClient | undefined): void {
  const route = (path: string, kind: string, call: (c: SimulationClient, body: JsonObject) => Promise<JsonObject>) =>
    app.post(path, async (req, reply) => {
      let body: unknown;
      try {
        body = readBody(req, OBJECT_MEDIA_TYPES, { group: "scheduling.flotilla.io", kind });
      } catch (e) {
        const f = toHttpError(e);
        return reply.code(f.code).type("application/json").send(f.body);
      }
      if (typeof body !== "object" || body === null || Array.isArray(body)) {
        const f = failure(400, "BadRequest", `the request body must be a ${kind} object`, { causes: [{ field: "", reason: "FieldValueTypeInvalid", message: "expected an object" }] });
        return reply.code(f.code).type("application/json").send(f.body);
      }
      if (!client) {
        const f = failure(503, "ServiceUnavailable", "no scheduler is configured for simulations");
        return reply.code(f.code).type("application/json").send(f.body);
      }
      try {
        const out = await call(client, body as JsonObject);
        return reply.code(200).type("application/json").send(out);
      } catch (e) {
        const err = e as grpc.ServiceError;
        const f = typeof err?.code === "number" ? fromGrpc(err) : failure(500, "InternalError", "Internal error occurred: the simulation could not be completed");
        if (f.code >= 500) req.log.warn({ err: e }, "simulation failed");
        return reply.code(f.code).type("application/json").send(f.body);
      }
    });
  route(SIMULATIONS_PATH, "Simulation", (c, body) => c.simulate(body));
  route(FAILURE_SIMULATIONS_PATH, "FailureSimulation", (c, body) => c.simulateFailure(body));
}
