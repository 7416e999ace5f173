import { InvalidError, type FieldError } from "@flotilla/api";
import { AUTHENTICATED_GROUP, type UserInfo } from "./rbac.js";

/** Kubernetes' user name of a service account: `system:serviceaccount:<namespace>:<name>`. */
export const serviceAccountUser = (namespace: string, name: string) => `system:serviceaccount:${namespace}:${name}`;

/** kube-apiserver's bounds on a requested token lifetime: at least 10 minutes (ValidateTokenRequest). */
export const MIN_TOKEN_SECONDS = 600;

export interface TokenPolicy {
  /** The API's audiences (kube-apiserver's --api-audiences): the default audience of a token, and what a presented token must carry one of. */
  audiences: string[];
  /** Lifetime when the request names none (kubectl create token: 1 h). */
  defaultSeconds: number;
  /** Longest lifetime handed out (--service-account-max-token-expiration); a longer request is cut to it, as upstream. */
  maxSeconds: number;
}

export interface TokenRequestSpec {
  audiences: string[];
  expirationSeconds: number;
}

/**
 * A TokenRequest's spec (authentication.k8s.io/v1), checked as kube-apiserver does: audiences
 * are strings (default the API's audiences), expirationSeconds is whole and at least 10 minutes
 * (default `defaultSeconds`, cut to `maxSeconds`). A bound object (Pod, Secret, Node) is refused:
 * nothing here runs pods, so a binding could never be checked.
 */
export function tokenRequestSpec(body: unknown, name: string, p: TokenPolicy): TokenRequestSpec {
  const errs: FieldError[] = [];
  const spec = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as { spec?: unknown }).spec : undefined;
  if (spec !== undefined && spec !== null && (typeof spec !== "object" || Array.isArray(spec))) errs.push({ field: "spec", reason: "FieldValueTypeInvalid", message: "must be an object" });
  const s = (typeof spec === "object" && spec !== null && !Array.isArray(spec) ? spec : {}) as Record<string, unknown>;
  let audiences = p.audiences;
  if (s.audiences !== undefined && s.audiences !== null) {
    if (!Array.isArray(s.audiences)) errs.push({ field: "spec.audiences", reason: "FieldValueTypeInvalid", message: "must be a list of strings" });
    else {
      s.audiences.forEach((a, i) => {
        if (typeof a !== "string" || a === "") errs.push({ field: `spec.audiences[${i}]`, reason: "FieldValueInvalid", message: "must be a non-empty string" });
      });
      if (s.audiences.length) audiences = s.audiences as string[];
    }
  }
  let seconds = p.defaultSeconds;
  if (s.expirationSeconds !== undefined && s.expirationSeconds !== null) {
    const v = s.expirationSeconds;
    if (typeof v !== "number" || !Number.isInteger(v)) errs.push({ field: "spec.expirationSeconds", reason: "FieldValueTypeInvalid", message: "must be a whole number of seconds" });
    else if (v < MIN_TOKEN_SECONDS) errs.push({ field: "spec.expirationSeconds", reason: "FieldValueInvalid", message: "may not specify a duration less than 10 minutes" });
    else if (v > 2 ** 32) errs.push({ field: "spec.expirationSeconds", reason: "FieldValueInvalid", message: "may not specify a duration larger than 2^32 seconds" });
    else seconds = v;
  }
  if (s.boundObjectRef !== undefined && s.boundObjectRef !== null) errs.push({ field: "spec.boundObjectRef", reason: "FieldValueNotSupported", message: "tokens bound to an object are not supported: no Pod, Secret or Node here can vouch for the binding" });
  if (errs.length) throw new InvalidError({ group: "authentication.k8s.io", kind: "TokenRequest", name }, errs);
  return { audiences: [...new Set(audiences)], expirationSeconds: Math.min(seconds, p.maxSeconds) };
}

/** The claims of a service account token, as Kubernetes writes them (private claim `kubernetes.io`). */
export interface ServiceAccountClaims {
  sub: string;
  "kubernetes.io": { namespace: string; serviceaccount: { name: string; uid: string } };
}

export const serviceAccountClaims = (namespace: string, name: string, uid: string): ServiceAccountClaims => ({
  sub: serviceAccountUser(namespace, name),
  "kubernetes.io": { namespace, serviceaccount: { name, uid } },
});

/** Which service account verified claims name, or undefined when they are not a service account token's (sub and the private claim must agree). */
export function claimedServiceAccount(payload: Record<string, unknown>): { namespace: string; name: string; uid: string } | undefined {
  const k = payload["kubernetes.io"] as { namespace?: unknown; serviceaccount?: { name?: unknown; uid?: unknown } } | undefined;
  if (typeof k !== "object" || k === null) return undefined;
  const namespace = k.namespace;
  const name = k.serviceaccount?.name;
  const uid = k.serviceaccount?.uid;
  if (typeof namespace !== "string" || typeof name !== "string" || typeof uid !== "string" || !namespace || !name || !uid) return undefined;
  if (payload.sub !== serviceAccountUser(namespace, name)) return undefined;
  return { namespace, name, uid };
}

/** The user a service account token authenticates: its user name, uid, and the groups Kubernetes gives every service account. */
export const serviceAccountUserInfo = (sa: { namespace: string; name: string; uid: string }): UserInfo => ({
  name: serviceAccountUser(sa.namespace, sa.name),
  uid: sa.uid,
  groups: ["system:serviceaccounts", `system:serviceaccounts:${sa.namespace}`, AUTHENTICATED_GROUP],
});
