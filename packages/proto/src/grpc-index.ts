// The gRPC side of the protocol (loads @grpc/grpc-js): service definitions, the Status-carrying
// error of a failed call, and the estimator client.
export { grpcServiceDefinition, statusServiceError, type GrpcHandlers } from "./grpc.js";
export { EstimatorClient, type ClusterEstimate, type EstimatorClientOptions } from "./estimator-client.js";
