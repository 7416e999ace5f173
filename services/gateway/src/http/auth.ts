import type { FastifyInstance, FastifyRequest } from "fastify";
import type * as grpc from "@grpc/grpc-js";
import { BadRequestError, decodeDocument, type FieldError } from "@flotilla/api";
import { authenticated, credentialReadCheck, type Access } from "../auth/access.js";
import { PUBLIC_PATHS, requestAttributes } from "../logic/access.js";
import type { Attributes, UserInfo } from "../logic/rbac.js";
import type { CallGuard } from "../grpc.js";
import type { ObjectApi, Scope } from "../objects.js";
import { OBJECT_MEDIA_TYPES, mediaType } from "./routes.js";
import { PROTOBUF_MEDIA_TYPE, decodeSelfSubjectAccessReviewSpec } from "../logic/protobuf.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The authenticated user (set before any route runs, except on the public paths). */
    user?: UserInfo;
  }
}

/**
 * Every request but the probes and the static pages is authenticated (401 Status without a
 * token the authenticator accepts) and authorized as Kubernetes RBAC (403 Status naming the verb
 * and resource), before its body is read.
 */
export function registerAuth(app: FastifyInstance, access: Access): void {
  app.decorateRequest("user", undefined);
  // client-go sends the authorization kinds as protobuf; only the review routes read it
  app.addContentTypeParser(PROTOBUF_MEDIA_TYPE, { parseAs: "buffer" }, (_req, body, done) => done(null, body));
  app.addHook("onRequest", async (req) => {
    const path = req.url.split("?")[0]!;
    if (PUBLIC_PATHS.has(path)) return;
    req.user = await authenticated(access, req.headers.authorization);
    access.authorizer.check(req.user, requestAttributes(req.method, req.url));
  });

  const body = (req: FastifyRequest, kind: string): Record<string, unknown> => {
    const format = OBJECT_MEDIA_TYPES.get(mediaType(req)) ?? "json";
    const doc = decodeDocument(String(req.body ?? ""), format, { group: "", kind });
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new BadRequestError(`the body must be a ${kind} object`);
    return doc as Record<string, unknown>;
  };

  // kubectl auth can-i
  app.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", async (req, reply) => {
    const spec = (mediaType(req) === PROTOBUF_MEDIA_TYPE ? decodeSelfSubjectAccessReviewSpec(req.body as Buffer) : (body(req, "SelfSubjectAccessReview").spec ?? {})) as Record<string, Record<string, unknown> | undefined>;
    const a = reviewAttributes(spec);
    const d = access.authorizer.decide(req.user!, a);
    reply.code(201);
    return { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", metadata: { creationTimestamp: null }, spec, status: { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) } };
  });

  // kubectl auth whoami (the body says nothing the token does not)
  app.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", async (req, reply) => {
    const u = req.user!;
    reply.code(201);
    return { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview", metadata: { creationTimestamp: null }, status: { userInfo: { username: u.name, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups } } };
  });
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

/** The API as this user may use it: the writes it may make are checked further (credentialReadCheck). */
export function apiForUser(api: ObjectApi, access: Access, user: UserInfo): ObjectApi {
  return api.withWriteCheck(credentialReadCheck(access.authorizer, user));
}

/** The gRPC front's guard: the `authorization` metadata authenticated, the verb authorized on the scope; the API to use for the call. */
export function grpcGuard(access: Access, api: ObjectApi): CallGuard {
  return async (md: grpc.Metadata, verb: string, s: Scope, name?: string, subresource?: string) => {
    const header = md.get("authorization")[0];
    const user = await authenticated(access, typeof header === "string" ? header : undefined);
    access.authorizer.check(user, { resourceRequest: true, verb, apiGroup: s.type.group, resource: s.type.plural, subresource, namespace: s.namespace, name: name || undefined });
    return apiForUser(api, access, user);
  };
}
