import { CORE, ForbiddenError, KARMADA, type KubeObject } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import { RbacAuthorizer as BaseAuthorizer, TokenFileAuthenticator, type Authenticator, type UserInfo } from "@flotilla/auth";
import type { ObjectStore } from "@flotilla/store";
import { bootstrapPolicy } from "../logic/access.js";
import type { Scope, WriteCheck } from "../objects.js";
import type { ServiceAccountTokens } from "./serviceaccounts.js";

export { TokenFileAuthenticator, type Authenticator };

/** Kubernetes RBAC (`@flotilla/auth`) that keeps the gateway's default roles (bootstrapPolicy) in place at start. */
export class RbacAuthorizer extends BaseAuthorizer {
  constructor(store: ObjectStore, log?: Logger) {
    super(store, log, bootstrapPolicy);
  }
}

/** Authentication then authorization, for both fronts. */
export interface Access {
  authenticator: Authenticator;
  authorizer: RbacAuthorizer;
  /** Issues service account tokens (TokenRequest); its authenticator is one of `authenticator`'s. Without it, no TokenRequest. */
  serviceAccounts?: ServiceAccountTokens;
}


/**
 * A Cluster may only name credentials (spec.secretRef, spec.impersonatorSecretRef) that its
 * writer could read: otherwise writing a Cluster would send another member's token to an
 * endpoint of the writer's choosing.
 */
export function credentialReadCheck(authorizer: RbacAuthorizer, user: UserInfo): WriteCheck {
  return (s: Scope, obj: KubeObject) => {
    if (s.type.group !== KARMADA.cluster.group || s.type.kind !== KARMADA.cluster.kind) return;
    const spec = (obj as { spec?: Record<string, { namespace?: string; name?: string } | undefined> }).spec ?? {};
    for (const field of ["secretRef", "impersonatorSecretRef"] as const) {
      const ref = spec[field];
      if (!ref?.name) continue;
      const a = { resourceRequest: true as const, verb: "get", apiGroup: CORE.secret.group, resource: CORE.secret.plural, namespace: ref.namespace ?? "", name: ref.name };
      if (!authorizer.decide(user, a).allowed) {
        throw new ForbiddenError(`spec.${field} names the secret ${ref.namespace ?? ""}/${ref.name}, which user ${JSON.stringify(user.name)} cannot read: a Cluster may only use credentials its writer could read`, {
          group: s.type.group,
          kind: s.type.plural,
          name: obj.metadata.name,
        });
      }
    }
  };
}
