// Who may call Flotilla, for every server that takes calls: the gateway's REST and gRPC fronts and
// the services' internal gRPC servers (the scheduler's Simulate, execution's replica estimator).
export * from "./logic.js";
export { TokenFileAuthenticator, unionAuthenticator, type Authenticator } from "./authenticator.js";
export { RbacAuthorizer } from "./rbac-authorizer.js";
export { ServiceAccountTokens, ensureSigningKey, parseKeys, parsePrivateKeys } from "./service-account-tokens.js";
export { newToken, adminLine, ensureTokenFile, createExclusive, ensureServingCert, isLoopback } from "./bootstrap.js";
export {
  admitCall,
  authorizedHandlers,
  callerCredentials,
  ensureServiceIdentity,
  selfIssuedToken,
  serverCredentials,
  serviceIdentityObjects,
  ESTIMATOR_METHODS,
  GATEWAY_IDENTITY,
  SCHEDULER_IDENTITY,
  SCHEDULER_METHODS,
  SERVICE_NAMESPACE,
  type CallAccess,
  type MethodAttributes,
  type ServiceIdentity,
} from "./grpc.js";
export { grpcServerSchema, grpcServerSecurity, serviceAccountVerifier, readCa, type GrpcServerSecurity } from "./settings.js";
