// Files made on the first start (token file, serving certificate) live in @flotilla/auth: every service with a TLS port uses them.
export { newToken, adminLine, ensureTokenFile, createExclusive, ensureServingCert, isLoopback } from "@flotilla/auth";
