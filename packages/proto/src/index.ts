// Messages only: the gRPC stubs and clients are in "@flotilla/proto/grpc", so that importing a
// message does not load @grpc/grpc-js.
export * from "./gen/flotilla/meta/v1/meta_pb.js";
export * from "./gen/flotilla/cluster/v1/cluster_pb.js";
export * from "./gen/flotilla/policy/v1/policy_pb.js";
export * from "./gen/flotilla/work/v1/work_pb.js";
export * from "./gen/flotilla/events/v1/events_pb.js";
export * from "./gen/flotilla/gateway/v1/objects_pb.js";
export * from "./gen/flotilla/estimator/v1/estimator_pb.js";
export * from "./gen/flotilla/scheduler/v1/scheduler_pb.js";
export { PROTO_DOCS } from "./gen/docs.js";
