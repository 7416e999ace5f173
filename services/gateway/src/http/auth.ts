import type { FastifyInstance, FastifyRequest } from "fastify";
import { BadRequestError, CORE, countShare, rateShare, type FieldError, TooManyRequestsError, UnauthorizedError } from "@flotilla/api";
import type { FleetShares } from "@flotilla/store";
import { credentialReadCheck, type Access } from "../auth/access.js";
import type { AuditLog } from "../auth/audit.js";
import { RateLimiter, Slots } from "../logic/limits.js";
import { AUTHENTICATED_GROUP, SUPERUSER_GROUP, rulesFor, userInfoJson, type Attributes, type UserInfo } from "../logic/rbac.js";
import { toHttpError } from "../logic/status.js";
import { PUBLIC_PATHS, requestAttributes } from "../logic/access.js";
import type { CallGuard, GrpcCall } from "../grpc.js";
import type { ObjectApi } from "../objects.js";
import { OBJECT_MEDIA_TYPES, mediaType, readBody } from "./routes.js";
import { PROTOBUF_MEDIA_TYPE, decodeSelfSubjectAccessReviewSpec, decodeSelfSubjectRulesReviewNamespace, decodeTokenRequest } from "../logic/protobuf.js";
import { tokenRequestSpec } from "../logic/serviceaccounts.js";
import type { ServiceAccountTokens } from "../auth/serviceaccounts.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The authenticated user (set before any route runs, except on the public paths). */
    user?: UserInfo;
    /** What the request asked and why it was allowed or refused, for the audit log. */
    authz?: { attrs: Attributes; receivedAt: Date; user?: UserInfo; impersonator?: UserInfo; reason?: string };
  }
}

/** Request rate and open watches per identity; members of system:masters are exempt (as Kubernetes' exempt priority level). */
export interface LimitSettings {
  /** Sustained requests per second per user (0: unlimited). */
  ratePerSecond: number;
  burst: number;
  /** Open watches per user (0: unlimited). */
  watchesPerUser: number;
  /** Failed authentications per second per client address before 429s. */
  failedAuthPerSecond: number;
}

export const DEFAULT_LIMITS: LimitSettings = { ratePerSecond: 50, burst: 200, watchesPerUser: 100, failedAuthPerSecond: 5 };

/** Everything a request passes before its route runs: limits, authentication, RBAC, and the audit log after. */
export interface Gatekeeping {
  access: Access;
  audit: AuditLog;
  limits?: LimitSettings;
  /**
   * This replica's leases on the per-user limits, shared with the other gateway replicas (each
   * user's request rate and watch cap are the fleet's); absent, they are this process's alone.
   */
  shares?: FleetShares;
}

/** The fleet-wide limits of a user (`limit_leases`): its request rate and its watch cap. */
export const userLimits = (name: string) => ({ requests: `gateway/requests/${name}`, watches: `gateway/watches/${name}` });

/**
 * What both fronts do before a call runs: authenticate, apply the user's request rate (and, per
 * client address, slow down failed authentications), impersonate when asked, authorize.
 */
export class Gatekeeper {
  readonly limits: LimitSettings;
  private readonly rate?: RateLimiter;
  private readonly failures: RateLimiter;
  private readonly watches?: Slots;

  constructor(readonly g: Gatekeeping) {
    this.limits = g.limits ?? DEFAULT_LIMITS;
    this.rate = this.limits.ratePerSecond > 0 ? new RateLimiter(this.limits.ratePerSecond, this.limits.burst) : undefined;
    this.failures = new RateLimiter(this.limits.failedAuthPerSecond, this.limits.failedAuthPerSecond * 4);
    this.watches = this.limits.watchesPerUser > 0 ? new Slots(this.limits.watchesPerUser) : undefined;
  }

  /**
   * The user a call runs as, or the 401/403/429 error. `record` learns who asked and why RBAC
   * decided as it did, also when this throws (for the audit log).
   */
  async admit(o: {
    authorization: string | undefined;
    client?: string;
    attrs: Attributes;
    headers?: Record<string, string | string[] | undefined>;
    record: { user?: UserInfo; impersonator?: UserInfo; reason?: string };
  }): Promise<{ user: UserInfo; exempt: boolean }> {
    return this.authorize(await this.authenticate(o), o);
  }

  /**
   * The first step of every call on either front, before anything else of the call is read (its
   * URL's or message's arguments included): the authenticated user, kept to its request rate;
   * else the 401, or the 429 once the client address has failed to authenticate too often (one
   * bucket per address, the same for REST and gRPC calls).
   */
  async authenticate(o: { authorization: string | undefined; client?: string; record: { user?: UserInfo } }): Promise<UserInfo> {
    const authn = await this.g.access.authenticator.authenticate(o.authorization);
    if (!authn) {
      // guessing tokens is slowed down per client address
      const wait = o.client ? this.failures.take(`ip:${addressKey(o.client)}`) : 0;
      if (wait) throw new TooManyRequestsError(`too many failed authentications from this address; retry in ${wait} s`, wait);
      throw new UnauthorizedError();
    }
    o.record.user = authn;
    const wait = isExempt(authn) || !this.rate ? 0 : this.rate.take(`user:${authn.name}`, await this.rateShare(authn.name));
    if (wait) throw new TooManyRequestsError(`user ${JSON.stringify(authn.name)} is over its request rate (${this.limits.ratePerSecond}/s); retry in ${wait} s`, wait);
    return authn;
  }

  /**
   * The part of the user's request rate that is this replica's (1 without shares): in
   * proportion to the user's requests here among the gateways' (rateShare). The first request
   * of a user here in a while waits for this replica's lease on its limits (one statement for
   * every user new at that moment); later ones use the last renewal's snapshot.
   */
  private async rateShare(name: string): Promise<number> {
    const s = this.g.shares;
    if (!s) return 1;
    const l = userLimits(name);
    s.ask(l.requests);
    // the watch cap is leased along, so that a watch (admitted synchronously) finds it known
    s.ask(l.watches, 0);
    if (!s.known(l.requests) || !s.known(l.watches)) await Promise.all([s.ready(l.requests), s.ready(l.watches)]);
    const { me, others } = s.snapshot(l.requests);
    return rateShare(this.limits.ratePerSecond, me, others) / this.limits.ratePerSecond;
  }

  /** The user an authenticated call runs as (impersonated when its headers ask), authorized by RBAC; else the 403. */
  authorize(
    authn: UserInfo,
    o: { attrs: Attributes; headers?: Record<string, string | string[] | undefined>; record: { user?: UserInfo; impersonator?: UserInfo; reason?: string } },
  ): { user: UserInfo; exempt: boolean } {
    const user = o.headers ? impersonate(this.g.access, authn, o.headers) : authn;
    if (user !== authn) Object.assign(o.record, { user, impersonator: authn });
    try {
      o.record.reason = this.g.access.authorizer.check(user, o.attrs).reason;
    } catch (e) {
      o.record.reason = (e as Error).message;
      throw e;
    }
    return { user, exempt: isExempt(authn) };
  }

  /** A watch slot of the user (released by the caller), or the 429 error. */
  watch(user: UserInfo, exempt: boolean): () => void {
    if (!this.watches || exempt) return () => {};
    const release = this.watches.acquire(user.name, this.watchShare(user.name));
    // a refusal is what this replica reports as wanting more (its demand beyond what it holds)
    if (!release) this.g.shares?.ask(userLimits(user.name).watches);
    if (!release) throw new TooManyRequestsError(`user ${JSON.stringify(user.name)} has ${this.limits.watchesPerUser} watches open; retry in 5 s`, 5);
    return release;
  }

  /**
   * How many watches of the user this replica may hold (the whole cap without shares): those
   * it holds, and its part of what the gateways together leave free (countShare, as of the last
   * renewal, with this replica's own count as it is now and the one asked for now).
   */
  private watchShare(name: string): number {
    const s = this.g.shares;
    const watches = this.watches!;
    if (!s) return this.limits.watchesPerUser;
    const l = userLimits(name).watches;
    s.ask(l, 0);
    s.levels(l, () => ({ held: watches.count(name) }));
    const { me, others } = s.snapshot(l);
    const held = watches.count(name);
    return countShare(this.limits.watchesPerUser, { holder: me.holder, used: held, demand: held + 1 }, others);
  }
}

/** Members of system:masters are exempt from the request rate and the watch cap. */
const isExempt = (u: UserInfo) => u.groups.includes(SUPERUSER_GROUP);

/** A client address as one failed-authentication bucket: an IPv4 address mapped into IPv6 is the IPv4 address. */
function addressKey(address: string): string {
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

/** A review's or request's JSON or YAML body (readBody: 415 for other media types), which must be an object. */
function body(req: FastifyRequest, kind: string): Record<string, unknown> {
  const doc = readBody(req, OBJECT_MEDIA_TYPES, { group: "", kind }) ?? {};
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new BadRequestError(`the body must be a ${kind} object`);
  return doc as Record<string, unknown>;
}

/**
 * Every request but the probes and the static pages is authenticated (401 Status without a
 * token the authenticator accepts), kept to its rate (429) and authorized as Kubernetes RBAC
 * (403 Status naming the verb and resource), before its body is read; writes and refusals are
 * audited when the answer is sent. The paths of `selfGuarded` (the Connect procedures) are left to
 * their handlers, which run the same Gatekeeper through the gRPC front's guard.
 */
export function registerAuth(app: FastifyInstance, gate: Gatekeeper, selfGuarded: ReadonlySet<string> = new Set()): void {
  app.decorateRequest("user", undefined);
  app.decorateRequest("authz", undefined);
  // client-go sends built-in kinds as protobuf; the review routes and the RBAC kinds' routes read it, others answer 415
  app.addContentTypeParser(PROTOBUF_MEDIA_TYPE, { parseAs: "buffer" }, (_req, body, done) => done(null, body));
  app.addHook("onRequest", async (req, reply) => {
    const path = req.url.split("?")[0]!;
    if (PUBLIC_PATHS.has(path)) return;
    // the Connect/gRPC-Web procedures authenticate in their handlers, through the gRPC front's guard
    if (selfGuarded.has(path)) return;
    const attrs = requestAttributes(req.method, req.url);
    const authz: NonNullable<FastifyRequest["authz"]> = { attrs, receivedAt: new Date() };
    req.authz = authz;
    const { user, exempt } = await gate.admit({ authorization: req.headers.authorization, client: req.ip, attrs, headers: req.headers, record: authz });
    req.user = user;
    if (attrs.verb === "watch") reply.raw.once("close", gate.watch(user, exempt));
  });
  app.addHook("onResponse", async (req, reply) => {
    const a = req.authz;
    if (!a) return;
    gate.g.audit.record({ uri: req.url, attrs: a.attrs, user: a.impersonator ?? a.user, impersonatedUser: a.impersonator ? a.user : undefined, sourceIP: req.ip, userAgent: req.headers["user-agent"], code: reply.statusCode, receivedAt: a.receivedAt, reason: a.reason });
  });
  const access = gate.g.access;

  // kubectl auth can-i
  app.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", async (req, reply) => {
    const spec = (mediaType(req) === PROTOBUF_MEDIA_TYPE ? decodeSelfSubjectAccessReviewSpec(req.body as Buffer) : (body(req, "SelfSubjectAccessReview").spec ?? {})) as Record<string, Record<string, unknown> | undefined>;
    const a = reviewAttributes(spec);
    const d = access.authorizer.decide(req.user!, a);
    reply.code(201);
    return { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", metadata: { creationTimestamp: null }, spec, status: { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) } };
  });

  // kubectl auth can-i --list
  app.post("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", async (req, reply) => {
    let namespace: unknown;
    if (mediaType(req) === PROTOBUF_MEDIA_TYPE) namespace = decodeSelfSubjectRulesReviewNamespace(req.body as Buffer);
    else namespace = (body(req, "SelfSubjectRulesReview").spec as { namespace?: unknown } | undefined)?.namespace ?? "";
    if (typeof namespace !== "string") throw new BadRequestError("spec.namespace must be a string", [{ field: "spec.namespace", reason: "FieldValueTypeInvalid", message: "must be a string" }]);
    const rules = rulesFor(access.authorizer.snapshot(), req.user!, namespace);
    reply.code(201);
    return {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectRulesReview",
      metadata: { creationTimestamp: null },
      spec: { namespace },
      status: {
        resourceRules: rules.filter((r) => !r.nonResourceURLs?.length).map((r) => ({ verbs: r.verbs ?? [], apiGroups: r.apiGroups ?? [], resources: r.resources ?? [], ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}) })),
        nonResourceRules: rules.filter((r) => r.nonResourceURLs?.length).map((r) => ({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs })),
        incomplete: false,
      },
    };
  });

  // kubectl auth whoami (the body says nothing the token does not)
  app.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", async (req, reply) => {
    const u = req.user!;
    reply.code(201);
    return { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview", metadata: { creationTimestamp: null }, status: { userInfo: userInfoJson(u) } };
  });
}

/**
 * TokenRequest (`kubectl create token <account>`): a token of an existing service account for
 * whoever RBAC lets `create` the `serviceaccounts/token` subresource (checked before the route
 * runs). The token names the account's uid, so it dies with the account.
 */
export function registerTokenRequests(app: FastifyInstance, api: ObjectApi, tokens: ServiceAccountTokens): void {
  app.post("/api/v1/namespaces/:namespace/serviceaccounts/:name/token", async (req, reply) => {
    const { namespace, name } = req.params as { namespace: string; name: string };
    const doc = mediaType(req) === PROTOBUF_MEDIA_TYPE ? decodeTokenRequest(req.body as Buffer) : body(req, "TokenRequest");
    const spec = tokenRequestSpec(doc, name, tokens.policy);
    const sa = await api.get({ type: CORE.serviceAccount, namespace }, name);
    const { token, expirationTimestamp } = await tokens.issue({ namespace, name, uid: sa.metadata.uid! }, spec);
    reply.code(201);
    return {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      metadata: { name, namespace, creationTimestamp: null },
      spec: { audiences: spec.audiences, expirationSeconds: spec.expirationSeconds, boundObjectRef: null },
      status: { token, expirationTimestamp },
    };
  });
}

/**
 * Kubernetes' user impersonation (`kubectl --as`, `--as-group`, `--as-uid`): the requester must be
 * allowed to `impersonate` that user (resource `users`), each group (`groups`) and the uid
 * (`uids` in authentication.k8s.io); the request then runs as the impersonated user alone.
 */
export function impersonate(access: Access, requester: UserInfo, headers: Record<string, string | string[] | undefined>): UserInfo {
  const one = (h: string | string[] | undefined) => (Array.isArray(h) ? h[0] : h);
  const many = (h: string | string[] | undefined) => (Array.isArray(h) ? h : h === undefined ? [] : h.split(",").map((g) => g.trim()).filter(Boolean));
  const name = one(headers["impersonate-user"]);
  const groups = many(headers["impersonate-group"]);
  const uid = one(headers["impersonate-uid"]);
  if (name === undefined && groups.length === 0 && uid === undefined) return requester;
  if (!name) throw new BadRequestError("impersonating groups or a uid needs Impersonate-User", [{ field: "Impersonate-User", reason: "FieldValueRequired", message: "required with Impersonate-Group and Impersonate-Uid" }]);
  const check = (apiGroup: string, resource: string, n: string) => access.authorizer.check(requester, { resourceRequest: true, verb: "impersonate", apiGroup, resource, namespace: "", name: n });
  check("", "users", name);
  for (const g of groups) check("", "groups", g);
  if (uid) check("authentication.k8s.io", "uids", uid);
  return { name, ...(uid ? { uid } : {}), groups: [...new Set([...groups, AUTHENTICATED_GROUP])] };
}

/** A SelfSubjectAccessReview's spec as attributes; a malformed one is a 400 naming the field. */
export function reviewAttributes(spec: Record<string, Record<string, unknown> | undefined>): Attributes {
  const str = (o: Record<string, unknown>, k: string, path: string, errs: FieldError[]) => {
    const v = o[k];
    if (v === undefined || v === null) return "";
    if (typeof v !== "string") errs.push({ field: `${path}.${k}`, reason: "FieldValueTypeInvalid", message: "must be a string" });
    return typeof v === "string" ? v : "";
  };
  const errs: FieldError[] = [];
  const r = spec.resourceAttributes;
  const n = spec.nonResourceAttributes;
  if ((r === undefined) === (n === undefined)) {
    throw new BadRequestError("exactly one of spec.resourceAttributes and spec.nonResourceAttributes must be given", [{ field: "spec.resourceAttributes", reason: "FieldValueRequired", message: "exactly one of resourceAttributes and nonResourceAttributes" }]);
  }
  let a: Attributes;
  if (r) {
    const p = "spec.resourceAttributes";
    a = {
      resourceRequest: true,
      verb: str(r, "verb", p, errs),
      apiGroup: str(r, "group", p, errs),
      resource: str(r, "resource", p, errs),
      subresource: str(r, "subresource", p, errs) || undefined,
      namespace: str(r, "namespace", p, errs),
      name: str(r, "name", p, errs) || undefined,
    };
  } else {
    const p = "spec.nonResourceAttributes";
    a = { resourceRequest: false, verb: str(n!, "verb", p, errs), path: str(n!, "path", p, errs) };
  }
  if (errs.length) throw new BadRequestError("the SelfSubjectAccessReview is malformed", errs);
  return a;
}

/** The API as this user may use it: the writes it may make are checked further (credentialReadCheck) and recorded as the user's. */
export function apiForUser(api: ObjectApi, access: Access, user: UserInfo): ObjectApi {
  return api.withWriteCheck(credentialReadCheck(access.authorizer, user)).asUser(user.name);
}

/**
 * The gRPC front's guard: a call is authenticated, kept to its rate and authorized as a REST
 * request is (the same Gatekeeper: one failed-authentication bucket per client address, one
 * request rate and one watch cap per user across both fronts), and audited when it is answered.
 */
export function grpcGuard(gate: Gatekeeper, api: ObjectApi): CallGuard {
  type Call = { attrs: Attributes; receivedAt: Date; sourceIP: string; user?: UserInfo; reason?: string };
  const calls = new WeakMap<GrpcCall, Call>();
  return {
    authenticate: async (c, verb) => {
      const sourceIP = peerAddress(c.getPeer());
      // until its arguments are read, a call is described by its method
      const call: Call = { attrs: { resourceRequest: false, verb, path: c.getPath() }, receivedAt: new Date(), sourceIP };
      calls.set(c, call);
      const header = c.metadata.get("authorization")[0];
      const authn = await gate.authenticate({ authorization: typeof header === "string" ? header : undefined, client: sourceIP, record: call });
      return {
        authorize: (v, s, name, subresource) => {
          call.attrs = { resourceRequest: true, verb: v, apiGroup: s.type.group, resource: s.type.plural, subresource, namespace: s.namespace, name: name || undefined };
          const { user } = gate.authorize(authn, { attrs: call.attrs, record: call });
          return apiForUser(api, gate.g.access, user);
        },
        holdWatch: () => gate.watch(authn, isExempt(authn)),
      };
    },
    done: (c, err) => {
      const call = calls.get(c);
      if (!call) return;
      gate.g.audit.record({ uri: c.getPath(), attrs: call.attrs, user: call.user, sourceIP: call.sourceIP, code: err === undefined ? 200 : toHttpError(err).code, receivedAt: call.receivedAt, reason: call.reason });
    },
  };
}

/** The address of a gRPC peer ("127.0.0.1:53211", "::1:53211"): its port cut off. */
function peerAddress(peer: string): string {
  const m = /^\[?(.*?)\]?:\d+$/.exec(peer);
  return m ? m[1]! : peer;
}
