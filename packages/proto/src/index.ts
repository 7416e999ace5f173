export * from "./gen/flotilla/meta/v1/meta_pb.js";
export * from "./gen/flotilla/cluster/v1/cluster_pb.js";
export * from "./gen/flotilla/policy/v1/policy_pb.js";
export * from "./gen/flotilla/work/v1/work_pb.js";
export * from "./gen/flotilla/events/v1/events_pb.js";
export * from "./gen/flotilla/gateway/v1/objects_pb.js";
export { grpcServiceDefinition, type GrpcHandlers } from "./grpc.js";
