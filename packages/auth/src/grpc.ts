import { isDeepStrictEqual } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { FlotillaError, ForbiddenError, GK, UnauthorizedError, groupKind, type KubeObject } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import { statusServiceError } from "@flotilla/proto/grpc";
import type { ObjectStore } from "@flotilla/store";
import type { Authenticator } from "./authenticator.js";
import { forbiddenMessage, type Attributes, type Decision, type PolicyRule, type UserInfo } from "./rbac.js";
import type { ServiceAccountTokens } from "./service-account-tokens.js";

/** Who may call a service's gRPC API: the gateway's authentication (bearer tokens) and RBAC. */
export interface CallAccess {
  authenticator: Authenticator;
  authorizer: { decide(user: UserInfo, a: Attributes): Decision };
}

/** The RBAC request a gRPC method is checked as, by the method's name in the service definition (`simulate`, …). */
export type MethodAttributes = Record<string, Attributes>;

/** The metadata's `authorization` value (the REST Authorization header's twin). */
const authorizationOf = (md: grpc.Metadata): string | undefined => {
  const v = md.get("authorization")[0];
  return typeof v === "string" ? v : undefined;
};

/**
 * The user a call runs as: its token authenticated (UNAUTHENTICATED otherwise, before anything
 * of the request is looked at) and RBAC allowing `attrs` (PERMISSION_DENIED otherwise, with the
 * Status naming the verb and resource, as the gateway answers).
 */
export async function admitCall(access: CallAccess, md: grpc.Metadata, attrs: Attributes): Promise<UserInfo> {
  const user = await access.authenticator.authenticate(authorizationOf(md));
  if (!user) throw new UnauthorizedError();
  const d = access.authorizer.decide(user, attrs);
  if (!d.allowed) {
    const base = forbiddenMessage(user, attrs);
    throw new ForbiddenError(d.reason ? `${base}: ${d.reason}` : base, attrs.resourceRequest ? { group: attrs.apiGroup, kind: attrs.resource, name: attrs.name } : undefined);
  }
  return user;
}

/**
 * The handlers of a service with every unary method behind admitCall: a method not listed in
 * `attributes` is refused to everyone (PERMISSION_DENIED), so a method added later is closed until
 * it is given its RBAC request. Refusals are logged at debug level with the user, never the token.
 */
export function authorizedHandlers(access: CallAccess, handlers: grpc.UntypedServiceImplementation, attributes: MethodAttributes, log?: Logger): grpc.UntypedServiceImplementation {
  const out: grpc.UntypedServiceImplementation = {};
  for (const [method, handler] of Object.entries(handlers)) {
    const attrs = attributes[method];
    out[method] = ((call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      const admitted = attrs ? admitCall(access, call.metadata, attrs) : Promise.reject(new ForbiddenError(`method ${method} is not open to any caller`));
      admitted.then(
        () => (handler as grpc.handleUnaryCall<unknown, unknown>)(call, cb),
        (e: unknown) => {
          const err = FlotillaError.from(e);
          log?.debug({ method, reason: err.reason }, "grpc call refused");
          cb(statusServiceError(err.code, err.toStatus()));
        },
      );
    }) as grpc.UntypedHandleCall;
  }
  return out;
}

/** A gRPC server's TLS (serving certificate and key, PEM); client certificates are not asked for. */
export function serverCredentials(tls: { cert: Buffer; key: Buffer }): grpc.ServerCredentials {
  return grpc.ServerCredentials.createSsl(null, [{ cert_chain: tls.cert, private_key: tls.key }], false);
}

/**
 * A caller's channel: TLS (the server's certificate checked against `ca`, else the system's
 * roots) and a bearer token in every call's `authorization` metadata, from `token()` (grpc-js sends
 * such call credentials over TLS only).
 */
export function callerCredentials(o: { ca?: Buffer; token: () => Promise<string> }): grpc.ChannelCredentials {
  const perCall = grpc.credentials.createFromMetadataGenerator((_params, cb) => {
    o.token().then(
      (t) => {
        const md = new grpc.Metadata();
        md.set("authorization", `Bearer ${t}`);
        cb(null, md);
      },
      (e: unknown) => cb(e instanceof Error ? e : new Error(String(e))),
    );
  });
  return grpc.credentials.combineChannelCredentials(grpc.credentials.createSsl(o.ca ?? null), perCall);
}

/** The namespace of Flotilla's own service accounts (written only by those allowed everything, as karmada-cluster). */
export const SERVICE_NAMESPACE = "flotilla-system";

/** A Flotilla service's identity as a caller: its ServiceAccount in SERVICE_NAMESPACE and the one ClusterRole it is bound to. */
export interface ServiceIdentity {
  /** The ServiceAccount's name (`flotilla-system/<name>`; user `system:serviceaccount:flotilla-system:<name>`). */
  name: string;
  /** What it may do: the rules of ClusterRole `system:flotilla:<name>`, nothing more. */
  rules: PolicyRule[];
}

const RBAC_GROUP = "rbac.authorization.k8s.io";
/** Labels of what ensureServiceIdentity writes. */
const BOOTSTRAP_LABELS = { "kubernetes.io/bootstrapping": "rbac-defaults", "app.kubernetes.io/managed-by": "flotilla" };

/** The objects of an identity: its Namespace, ServiceAccount, ClusterRole and ClusterRoleBinding. */
export function serviceIdentityObjects(id: ServiceIdentity): KubeObject[] {
  const role = `system:flotilla:${id.name}`;
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: SERVICE_NAMESPACE, labels: { "app.kubernetes.io/managed-by": "flotilla" } } },
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { namespace: SERVICE_NAMESPACE, name: id.name, labels: { "app.kubernetes.io/managed-by": "flotilla" } } },
    { apiVersion: `${RBAC_GROUP}/v1`, kind: "ClusterRole", metadata: { name: role, labels: BOOTSTRAP_LABELS }, rules: id.rules } as KubeObject,
    {
      apiVersion: `${RBAC_GROUP}/v1`,
      kind: "ClusterRoleBinding",
      metadata: { name: role, labels: BOOTSTRAP_LABELS },
      roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: role },
      subjects: [{ kind: "ServiceAccount", namespace: SERVICE_NAMESPACE, name: id.name }],
    } as KubeObject,
  ];
}

/**
 * Writes a service's identity where it is missing: the Namespace and ServiceAccount are created
 * once and never replaced (the account's uid is in its tokens), the ClusterRole and its binding
 * are put back to their rules unless annotated `rbac.authorization.kubernetes.io/autoupdate:
 * "false"`. Replicas starting together meet in the store's upsert. Returns the account with its uid.
 */
export async function ensureServiceIdentity(store: ObjectStore, id: ServiceIdentity): Promise<{ namespace: string; name: string; uid: string }> {
  let sa: KubeObject | undefined;
  for (const want of serviceIdentityObjects(id)) {
    const gk = groupKind({ group: want.apiVersion.includes("/") ? want.apiVersion.split("/")[0]! : "", kind: want.kind });
    const ref = { gk, namespace: want.metadata.namespace, name: want.metadata.name! };
    const { obj } = await store.upsert(ref, (cur) => {
      if (!cur) return want;
      if (want.kind === "Namespace" || want.kind === "ServiceAccount") return undefined;
      if (cur.metadata.annotations?.["rbac.authorization.kubernetes.io/autoupdate"] === "false") return undefined;
      const content = (o: KubeObject) => ({ rules: (o as { rules?: unknown }).rules, roleRef: (o as { roleRef?: unknown }).roleRef, subjects: (o as { subjects?: unknown }).subjects });
      return isDeepStrictEqual(content(cur), content(want)) ? undefined : { ...cur, ...want, metadata: { ...cur.metadata, labels: { ...cur.metadata.labels, ...want.metadata.labels } } };
    });
    if (gk === GK.serviceAccount) sa = obj;
  }
  if (!sa?.metadata.uid) throw new Error(`service account ${SERVICE_NAMESPACE}/${id.name} has no uid`);
  return { namespace: SERVICE_NAMESPACE, name: id.name, uid: sa.metadata.uid };
}

/**
 * A service's own token, signed with the service-account key it holds (as kube-controller-manager
 * holds --service-account-private-key-file): its identity is ensured and a token issued for the
 * verifiers' first audience, kept until four fifths of its lifetime have passed, then issued
 * again (the identity ensured again with it, so a deleted account comes back).
 */
export function selfIssuedToken(o: { store: ObjectStore; tokens: ServiceAccountTokens; identity: ServiceIdentity; lifetimeSeconds?: number; now?: () => number }): () => Promise<string> {
  const lifetime = Math.max(600, o.lifetimeSeconds ?? 3600);
  const now = o.now ?? Date.now;
  let current: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;
  return () => {
    if (current && now() < current.renewAt) return Promise.resolve(current.token);
    pending ??= (async () => {
      try {
        const sa = await ensureServiceIdentity(o.store, o.identity);
        const at = now();
        const { token } = await o.tokens.issue(sa, { audiences: [o.tokens.policy.audiences[0]!], expirationSeconds: lifetime }, new Date(at));
        current = { token, renewAt: at + lifetime * 800 };
        return token;
      } finally {
        pending = undefined;
      }
    })();
    return pending;
  };
}

/** The gateway's identity towards the scheduler: it may run simulations and failure simulations, nothing else. */
export const GATEWAY_IDENTITY: ServiceIdentity = {
  name: "gateway",
  rules: [{ verbs: ["create"], apiGroups: ["scheduling.flotilla.io"], resources: ["simulations", "failuresimulations"] }],
};

/** The scheduler's identity towards the replica estimator: it may ask for available replicas, nothing else. */
export const SCHEDULER_IDENTITY: ServiceIdentity = {
  name: "scheduler",
  rules: [{ verbs: ["create"], apiGroups: ["estimator.flotilla.io"], resources: ["maxavailablereplicas"] }],
};

/** The RBAC requests of the scheduler's gRPC methods (as the gateway's REST routes for them). */
export const SCHEDULER_METHODS: MethodAttributes = {
  simulate: { resourceRequest: true, verb: "create", apiGroup: "scheduling.flotilla.io", resource: "simulations", namespace: "" },
  simulateFailure: { resourceRequest: true, verb: "create", apiGroup: "scheduling.flotilla.io", resource: "failuresimulations", namespace: "" },
};

/** The RBAC request of the replica estimator's method. */
export const ESTIMATOR_METHODS: MethodAttributes = {
  maxAvailableReplicas: { resourceRequest: true, verb: "create", apiGroup: "estimator.flotilla.io", resource: "maxavailablereplicas", namespace: "" },
};
