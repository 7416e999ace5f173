import type { KubeStatus } from "@flotilla/api";

export interface HttpError {
  code: number;
  body: KubeStatus;
}

function status(code: number, reason: string, message: string, details?: KubeStatus["details"]): HttpError {
  return { code, body: { apiVersion: "v1", kind: "Status", metadata: {}, status: "Failure", message, reason, details, code } };
}

type Named = Error & {
  ref?: { group: string; kind: string; name?: string };
  causes?: Array<{ field: string; reason: string; message: string }>;
  /** fastify's own errors (FST_ERR_*) carry their HTTP status. */
  code?: unknown;
  statusCode?: unknown;
};

/** Kubernetes' StatusReason for the 4xx codes fastify answers itself (bad URL, body too large, unknown media type, ...). */
const REASONS: Record<number, string> = {
  400: "BadRequest",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  408: "Timeout",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  429: "TooManyRequests",
};

/**
 * Maps an error to an HTTP status and a Kubernetes Status body, once, at the edge.
 * Anything unrecognised is a 500 that does not leak internals.
 */
export function toHttpError(err: unknown): HttpError {
  const e = err as Named;
  if (typeof e?.code === "string" && e.code.startsWith("FST_") && typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
    return status(e.statusCode, REASONS[e.statusCode] ?? "BadRequest", e.message);
  }
  const details = e?.ref ? { name: e.ref.name, group: e.ref.group, kind: plural(e.ref.kind) } : undefined;
  switch (e?.name) {
    case "NotFoundError":
      return status(404, "NotFound", e.message, details);
    case "AlreadyExistsError":
      return status(409, "AlreadyExists", e.message, details);
    case "ConflictError":
      return status(409, "Conflict", e.message, details);
    case "InvalidError":
      // the Kind itself, as kube-apiserver's NewInvalid (kubectl prints 'The PropagationPolicy "x" is invalid')
      return status(422, "Invalid", e.message, { ...details, ...(e.ref ? { kind: e.ref.kind } : {}), causes: e.causes?.map((c) => ({ reason: c.reason, message: c.message, field: c.field })) });
    case "BadRequestError":
      return status(400, "BadRequest", e.message, e.causes?.length ? { causes: e.causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field })) } : undefined);
    case "GoneError":
      return status(410, "Expired", e.message);
    case "MethodNotAllowedError":
      return status(405, "MethodNotAllowed", e.message);
    case "UnsupportedMediaTypeError":
      return status(415, "UnsupportedMediaType", e.message);
    case "UnavailableError":
      return status(503, "ServiceUnavailable", e.message);
    case "UnauthorizedError":
      return status(401, "Unauthorized", e.message);
    case "TooManyRequestsError":
      return status(429, "TooManyRequests", e.message, { retryAfterSeconds: (e as unknown as TooManyRequestsError).retryAfterSeconds });
    case "ForbiddenError":
      return status(403, "Forbidden", e.message, (e as unknown as ForbiddenError).details);
    default:
      return status(500, "InternalError", "Internal error occurred: the request could not be completed");
  }
}

function plural(kind: string): string {
  return kind.toLowerCase();
}

export class MethodNotAllowedError extends Error {
  override readonly name = "MethodNotAllowedError";
}
export class UnsupportedMediaTypeError extends Error {
  override readonly name = "UnsupportedMediaTypeError";
}
/** No credentials, or credentials no authenticator accepts (401). */
export class UnauthorizedError extends Error {
  override readonly name = "UnauthorizedError";
  constructor(message = "Unauthorized") {
    super(message);
  }
}
/** Over the caller's request rate or its open watches (429, with Retry-After). */
export class TooManyRequestsError extends Error {
  override readonly name = "TooManyRequestsError";
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}
/** An authenticated user asked for something no rule allows (403); details name the resource as Kubernetes does. */
export class ForbiddenError extends Error {
  override readonly name = "ForbiddenError";
  constructor(
    message: string,
    readonly details?: { group?: string; kind?: string; name?: string },
  ) {
    super(message);
  }
}

export function successStatus(message = ""): KubeStatus {
  return { apiVersion: "v1", kind: "Status", metadata: {}, status: "Success", message, code: 200 };
}
