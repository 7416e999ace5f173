import { int, port, str } from "@flotilla/config";

export const configSchema = {
  HOST: str("127.0.0.1", "address the REST and gRPC servers listen on"),
  PORT: port(8080, "REST port"),
  GRPC_PORT: port(9090, "gRPC port (0 disables)"),
  SCHEDULER_GRPC_URL: str("127.0.0.1:9092", "host:port of the scheduler's gRPC API, which answers POST /apis/scheduling.flotilla.io/v1alpha1/simulations"),
  DEFAULT_NOT_READY_TOLERATION_SECONDS: int(300, { min: 0 }, "tolerationSeconds of the not-ready NoExecute toleration added to every policy"),
  DEFAULT_UNREACHABLE_TOLERATION_SECONDS: int(300, { min: 0 }, "tolerationSeconds of the unreachable NoExecute toleration added to every policy"),
};
