import * as grpc from "@grpc/grpc-js";
import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import {
  EstimatorService,
  MaxAvailableReplicasRequestSchema,
  type MaxAvailableReplicasResponse,
} from "./gen/flotilla/estimator/v1/estimator_pb.js";
import { ReplicaRequirementsSchema, type ReplicaRequirementsJson } from "./gen/flotilla/work/v1/work_pb.js";
import { grpcServiceDefinition } from "./grpc.js";

/** One cluster's answer: `maxReplicas` is -1 (with `error`) when the estimator could not tell. */
export interface ClusterEstimate {
  name: string;
  maxReplicas: number;
  error?: string;
  /** Age of the member snapshot behind the answer (absent from estimators that do not say). */
  snapshotAgeMs?: number;
}

export interface EstimatorClientOptions {
  /** Deadline of each call unless the call gives its own (default 3 s). */
  deadlineMs?: number;
  credentials?: grpc.ChannelCredentials;
}

const EstimatorGrpcClient = grpc.makeGenericClientConstructor(grpcServiceDefinition(EstimatorService), "EstimatorService");

/**
 * A typed client of flotilla.estimator.v1.EstimatorService (served by the execution service).
 * Every call carries a deadline; a missed deadline rejects with a grpc ServiceError
 * (code DEADLINE_EXCEEDED), so a caller can fall back to another estimate.
 */
export class EstimatorClient {
  private readonly client: grpc.Client & Record<string, (req: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r: MaxAvailableReplicasResponse) => void) => void>;
  private readonly deadlineMs: number;

  constructor(address: string, o: EstimatorClientOptions = {}) {
    this.client = new EstimatorGrpcClient(address, o.credentials ?? grpc.credentials.createInsecure()) as never;
    this.deadlineMs = o.deadlineMs ?? 3000;
  }

  /**
   * The replicas each cluster can still take for one replica shaped like `requirements`
   * (ResourceBinding.spec.replicaRequirements JSON). An empty cluster list asks for every joined cluster.
   */
  maxAvailableReplicas(clusters: string[], requirements?: ReplicaRequirementsJson, o: { deadlineMs?: number } = {}): Promise<ClusterEstimate[]> {
    const req = create(MaxAvailableReplicasRequestSchema, {
      clusters,
      replicaRequirements: requirements ? fromJson(ReplicaRequirementsSchema, requirements as JsonValue, { ignoreUnknownFields: true }) : undefined,
    });
    const deadline = new Date(Date.now() + (o.deadlineMs ?? this.deadlineMs));
    return new Promise((resolve, reject) => {
      this.client.maxAvailableReplicas(req, new grpc.Metadata(), { deadline }, (err, res) => {
        if (err) return reject(err);
        resolve(
          res.clusters.map((c) => ({
            name: c.name,
            maxReplicas: c.maxReplicas,
            ...(c.error ? { error: c.error } : {}),
            ...(c.snapshotAgeMs !== undefined ? { snapshotAgeMs: Number(c.snapshotAgeMs) } : {}),
          })),
        );
      });
    });
  }

  close(): void {
    this.client.close();
  }
}
