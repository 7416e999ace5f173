// Service account tokens (issue and verify) live in @flotilla/auth: the scheduler and execution verify them too.
export { ServiceAccountTokens, ensureSigningKey, parsePrivateKeys, parseKeys } from "@flotilla/auth";
