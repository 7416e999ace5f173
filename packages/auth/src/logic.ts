// The pure side of authentication and authorization: Kubernetes RBAC decisions, token files and
// service-account claims (no I/O; the gateway's request handling and tests use them alone).
export * from "./rbac.js";
export * from "./tokens.js";
export * from "./service-account-claims.js";
