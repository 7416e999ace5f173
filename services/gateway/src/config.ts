import { bool, int, port, str } from "@flotilla/config";

export const configSchema = {
  HOST: str("127.0.0.1", "address the REST and gRPC servers listen on"),
  PORT: port(8080, "REST port"),
  GRPC_PORT: port(9090, "gRPC port (0 disables)"),
  SCHEDULER_GRPC_URL: str("127.0.0.1:9092", "host:port of the scheduler's gRPC API, which answers POST /apis/scheduling.flotilla.io/v1alpha1/simulations"),
  DEFAULT_NOT_READY_TOLERATION_SECONDS: int(300, { min: 0 }, "tolerationSeconds of the not-ready NoExecute toleration added to every policy"),
  DEFAULT_UNREACHABLE_TOLERATION_SECONDS: int(300, { min: 0 }, "tolerationSeconds of the unreachable NoExecute toleration added to every policy"),
  TOKEN_AUTH_FILE: str("", 'bearer tokens, one `token,user,uid,"group1,group2"` per line (kube-apiserver\'s --token-auth-file); required'),
  TLS_CERT_FILE: str("", "serving certificate (PEM) of the REST and gRPC servers; without it and TLS_KEY_FILE they speak plaintext, which is allowed only on a loopback HOST"),
  TLS_KEY_FILE: str("", "private key (PEM) of TLS_CERT_FILE"),
  TLS_CERT_CREATE: bool(false, "when TLS_CERT_FILE does not exist, create a self-signed certificate for localhost, 127.0.0.1 and HOST (needs the openssl command)"),
  TLS_CERT_HOSTS: str("", "more names or addresses of the created certificate, comma-separated (localhost, 127.0.0.1 and HOST are always in)"),
  AUDIT_LOG_PATH: str("", "audit log: one JSON line (audit.k8s.io/v1 Event, level Metadata) per write and per refused request; a file (appended), - for stdout, empty for none"),
  RATE_LIMIT_QPS: int(50, { min: 0 }, "sustained requests per second per user (system:masters exempt); 0 unlimited"),
  RATE_LIMIT_BURST: int(200, { min: 1 }, "requests a user may make at once above the sustained rate"),
  MAX_WATCHES_PER_USER: int(100, { min: 0 }, "open watches per user (system:masters exempt); 0 unlimited"),
  TOKEN_AUTH_FILE_CREATE: bool(false, "when TOKEN_AUTH_FILE does not exist, create it (mode 0600) with one random token of user admin in group system:masters"),
};
