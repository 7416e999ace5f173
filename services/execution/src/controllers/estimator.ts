import { setMaxListeners } from "node:events";
import * as grpc from "@grpc/grpc-js";
import { create, toJson } from "@bufbuild/protobuf";
import {
  EstimatorService,
  MaxAvailableReplicasResponseSchema,
  ReplicaRequirementsSchema,
  type ClusterReplicas,
  type MaxAvailableReplicasRequest,
  type MaxAvailableReplicasResponse,
} from "@flotilla/proto";
import { grpcServiceDefinition } from "@flotilla/proto/grpc";
import type { Logger } from "@flotilla/log";
import { maxAvailableReplicas, type ReplicaRequirementsLike } from "../logic/estimate.js";
import type { ClusterCache } from "./cluster-cache.js";
import type { Members } from "./members.js";

export const estimatorServiceDefinition = grpcServiceDefinition(EstimatorService);

export interface EstimatorConfig {
  /** Upper bound of one call when the caller's deadline is later or absent. */
  timeoutMs: number;
  /** A member's capacity snapshot older than this is listed again before answering. */
  maxSnapshotAgeMs: number;
}

export interface EstimatorDeps {
  clusters: ClusterCache;
  members: Members;
  cfg: EstimatorConfig;
  log: Logger;
  /** Each call's duration and cluster count, for metrics. */
  onCall?: (ms: number, clusters: number) => void;
}

function deadlineMs(call: grpc.ServerUnaryCall<unknown, unknown>): number | undefined {
  const dl = call.getDeadline();
  const at = dl instanceof Date ? dl.getTime() : typeof dl === "number" ? dl : Infinity;
  return Number.isFinite(at) ? at - Date.now() : undefined;
}

/** Resolves with `p`, or with undefined once the signal aborts. */
function orAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => (signal.removeEventListener("abort", onAbort), resolve(v)),
      (e) => (signal.removeEventListener("abort", onAbort), reject(e)),
    );
  });
}

/**
 * The replicas each member can still take for one replica's requirements, from its nodes and
 * pods (Karmada's scheduler-estimator: per node, allocatable − requested divided by the request,
 * capped by free pod slots, over the nodes matching the node claim). Answers within the caller's
 * deadline (or `timeoutMs`): a cluster that is not Ready, unknown, or not listed in time gets -1
 * with the reason.
 */
export async function estimate(d: EstimatorDeps, req: MaxAvailableReplicasRequest, budgetMs: number): Promise<MaxAvailableReplicasResponse> {
  const t0 = performance.now();
  const ac = new AbortController();
  setMaxListeners(0, ac.signal); // one listener per cluster and request
  const timer = setTimeout(() => ac.abort(), Math.max(1, budgetMs));
  try {
    const names = req.clusters.length ? req.clusters : d.clusters.names().sort();
    const requirements = req.replicaRequirements ? (toJson(ReplicaRequirementsSchema, req.replicaRequirements) as ReplicaRequirementsLike) : undefined;
    const results = await Promise.all(
      names.map(async (name): Promise<Pick<ClusterReplicas, "name" | "maxReplicas" | "error" | "snapshotAgeMs">> => {
        const entry = d.clusters.get(name);
        if (!entry) return { name, maxReplicas: -1, error: "cluster not found" };
        if (entry.deleting) return { name, maxReplicas: -1, error: "cluster is being deleted" };
        if (!entry.ready) return { name, maxReplicas: -1, error: "cluster is not ready" };
        if (entry.pull) return { name, maxReplicas: -1, error: "cluster is in Pull mode: its agent reports resourceSummary instead" };
        if (!entry.endpoint.ok) return { name, maxReplicas: -1, error: entry.endpoint.reason };
        try {
          const client = d.members.client(name, entry.endpoint.endpoint);
          // a refresh that does not finish in time falls back to the last snapshot, however old
          const snap = (await orAbort(d.members.capacity(name, client, d.cfg.maxSnapshotAgeMs, ac.signal), ac.signal)) ?? d.members.lastCapacity(name);
          if (!snap) return { name, maxReplicas: -1, error: `no node snapshot within ${budgetMs} ms` };
          return { name, maxReplicas: maxAvailableReplicas(snap.nodes, requirements), error: "", snapshotAgeMs: BigInt(Math.max(0, Date.now() - snap.at)) };
        } catch (e) {
          return { name, maxReplicas: -1, error: `listing nodes and pods failed: ${(e as Error).message}` };
        }
      }),
    );
    d.onCall?.(performance.now() - t0, names.length);
    return create(MaxAvailableReplicasResponseSchema, { clusters: results });
  } finally {
    clearTimeout(timer);
  }
}

/** grpc-js handlers of flotilla.estimator.v1.EstimatorService. */
export function estimatorHandlers(d: EstimatorDeps): grpc.UntypedServiceImplementation {
  return {
    maxAvailableReplicas: (call: grpc.ServerUnaryCall<MaxAvailableReplicasRequest, MaxAvailableReplicasResponse>, cb: grpc.sendUnaryData<MaxAvailableReplicasResponse>) => {
      const left = deadlineMs(call as grpc.ServerUnaryCall<unknown, unknown>);
      if (left !== undefined && left <= 0) return cb({ code: grpc.status.DEADLINE_EXCEEDED, details: "deadline already passed" } as grpc.ServiceError);
      // leave a little of the caller's deadline for the answer to travel back
      const budget = Math.min(d.cfg.timeoutMs, left === undefined ? Infinity : Math.max(1, left - Math.min(50, left / 10)));
      estimate(d, call.request, budget).then(
        (r) => cb(null, r),
        (e) => {
          d.log.error({ err: e }, "estimator call failed");
          cb({ code: grpc.status.INTERNAL, details: "estimation failed" } as grpc.ServiceError);
        },
      );
    },
  };
}
