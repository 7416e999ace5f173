// Kubernetes RBAC lives in @flotilla/auth (the gateway and the services' internal gRPC servers authorize alike).
export * from "@flotilla/auth/logic";
