// Bearer tokens and token files live in @flotilla/auth (shared with the services' internal gRPC servers).
export * from "@flotilla/auth/logic";
