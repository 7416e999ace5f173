import type { KubeStatus } from "./types.js";

/**
 * One taxonomy for the errors Flotilla's own code raises. Every error carries a Kubernetes
 * StatusReason; its gRPC code, its HTTP status and whether a retry can help follow from the
 * reason in one table (`REASONS`), so the REST and gRPC fronts map errors the same way and the
 * controller runtime knows what to retry without a list of names. `FlotillaError.from(unknown)`
 * turns anything thrown into one of them (an unrecognised error is an `InternalError` whose
 * message does not leak internals).
 */

/** gRPC status codes (google.rpc.Code), as numbers: this package imports no gRPC library. */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcCode = (typeof GrpcCode)[keyof typeof GrpcCode];

/** What each Kubernetes StatusReason means on the wire and to a retry loop. */
export const REASONS = {
  BadRequest: { http: 400, grpc: GrpcCode.INVALID_ARGUMENT, retryable: false },
  Unauthorized: { http: 401, grpc: GrpcCode.UNAUTHENTICATED, retryable: false },
  Forbidden: { http: 403, grpc: GrpcCode.PERMISSION_DENIED, retryable: false },
  NotFound: { http: 404, grpc: GrpcCode.NOT_FOUND, retryable: true },
  MethodNotAllowed: { http: 405, grpc: GrpcCode.UNIMPLEMENTED, retryable: false },
  NotAcceptable: { http: 406, grpc: GrpcCode.INVALID_ARGUMENT, retryable: false },
  Timeout: { http: 408, grpc: GrpcCode.DEADLINE_EXCEEDED, retryable: true },
  AlreadyExists: { http: 409, grpc: GrpcCode.ALREADY_EXISTS, retryable: true },
  Conflict: { http: 409, grpc: GrpcCode.ABORTED, retryable: true },
  Expired: { http: 410, grpc: GrpcCode.OUT_OF_RANGE, retryable: true },
  RequestEntityTooLarge: { http: 413, grpc: GrpcCode.RESOURCE_EXHAUSTED, retryable: false },
  UnsupportedMediaType: { http: 415, grpc: GrpcCode.INVALID_ARGUMENT, retryable: false },
  Invalid: { http: 422, grpc: GrpcCode.INVALID_ARGUMENT, retryable: false },
  TooManyRequests: { http: 429, grpc: GrpcCode.RESOURCE_EXHAUSTED, retryable: true },
  InternalError: { http: 500, grpc: GrpcCode.INTERNAL, retryable: true },
  ServiceUnavailable: { http: 503, grpc: GrpcCode.UNAVAILABLE, retryable: true },
} as const satisfies Record<string, { http: number; grpc: GrpcCode; retryable: boolean }>;
export type StatusReason = keyof typeof REASONS;

/** The reason for an HTTP status code answered by something other than Flotilla (a 4xx of the HTTP server itself). */
export function reasonForHttp(code: number): StatusReason {
  for (const [reason, r] of Object.entries(REASONS)) if (r.http === code && reason !== "AlreadyExists") return reason as StatusReason;
  return code >= 500 ? "InternalError" : "BadRequest";
}

/** One invalid field, as a Kubernetes StatusCause. */
export interface FieldError {
  field: string;
  reason: "FieldValueRequired" | "FieldValueInvalid" | "FieldValueNotSupported" | "FieldValueDuplicate" | "FieldValueForbidden" | "FieldValueTypeInvalid" | "FieldValueTooLong" | "FieldValueUnknown" | "FieldValueNotFound";
  message: string;
}

export interface ResourceRef {
  group: string;
  kind: string;
  name?: string;
}

type StatusDetails = NonNullable<KubeStatus["details"]>;

const INTERNAL_MESSAGE = "Internal error occurred: the request could not be completed";

/** The base of every error Flotilla raises on purpose. */
export class FlotillaError extends Error {
  constructor(
    readonly reason: StatusReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The gRPC code of the reason. */
  get code(): GrpcCode {
    return REASONS[this.reason].grpc;
  }
  get httpStatus(): number {
    return REASONS[this.reason].http;
  }
  /** Whether the same call may succeed later unchanged (a conflict, a dependency down), or only with other input. */
  get retryable(): boolean {
    return REASONS[this.reason].retryable;
  }
  /** What a Kubernetes Status says about the object (`details`). */
  get details(): StatusDetails | undefined {
    return undefined;
  }

  /** This error as a Kubernetes Status body. */
  toStatus(): KubeStatus {
    const details = this.details;
    return { apiVersion: "v1", kind: "Status", metadata: {}, status: "Failure", message: this.message, reason: this.reason, ...(details ? { details } : {}), code: this.httpStatus };
  }

  /**
   * Anything thrown, as a FlotillaError: itself when it is one; an HTTP server's own 4xx error
   * (fastify's `FST_*`, with `statusCode`) with its message; anything else an `InternalError`
   * that keeps the original as its cause and says nothing of it.
   */
  static from(e: unknown): FlotillaError {
    if (e instanceof FlotillaError) return e;
    const x = e as { code?: unknown; statusCode?: unknown; message?: unknown } | null;
    if (x && typeof x.code === "string" && x.code.startsWith("FST_") && typeof x.statusCode === "number" && x.statusCode >= 400 && x.statusCode < 500) {
      return new FlotillaError(reasonForHttp(x.statusCode), typeof x.message === "string" ? x.message : "bad request", { cause: e });
    }
    return new InternalError(INTERNAL_MESSAGE, { cause: e });
  }
}

const qualified = (ref: ResourceRef) => `${ref.kind}${ref.group ? "." + ref.group : ""} "${ref.name ?? ""}"`;
/** Status details naming an object: the kind in lower case, as kube-apiserver names the resource. */
const objectDetails = (ref: ResourceRef): StatusDetails => ({ name: ref.name, group: ref.group, kind: ref.kind.toLowerCase() });
const causesOf = (causes: readonly FieldError[]) => causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field }));

export class NotFoundError extends FlotillaError {
  override readonly name = "NotFoundError";
  constructor(readonly ref: ResourceRef, options?: { cause?: unknown }) {
    super("NotFound", `${qualified(ref)} not found`, options);
  }
  override get details() {
    return objectDetails(this.ref);
  }
}

export class AlreadyExistsError extends FlotillaError {
  override readonly name = "AlreadyExistsError";
  constructor(readonly ref: ResourceRef, options?: { cause?: unknown }) {
    super("AlreadyExists", `${qualified(ref)} already exists`, options);
  }
  override get details() {
    return objectDetails(this.ref);
  }
}

/** Optimistic concurrency failed: the object changed since it was read. */
export class ConflictError extends FlotillaError {
  override readonly name = "ConflictError";
  constructor(readonly ref: ResourceRef, detail = "the object has been modified; please apply your changes to the latest version and try again", options?: { cause?: unknown }) {
    super("Conflict", `Operation cannot be fulfilled on ${qualified(ref)}: ${detail}`, options);
  }
  override get details() {
    return objectDetails(this.ref);
  }
}

/** Lists every bad field at once. */
export class InvalidError extends FlotillaError {
  override readonly name = "InvalidError";
  constructor(readonly ref: ResourceRef, readonly causes: FieldError[], options?: { cause?: unknown }) {
    super("Invalid", `${qualified(ref)} is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(", ")}`, options);
  }
  /** The Kind itself, as kube-apiserver's NewInvalid (kubectl prints 'The PropagationPolicy "x" is invalid'). */
  override get details() {
    return { ...objectDetails(this.ref), kind: this.ref.kind, causes: causesOf(this.causes) };
  }
}

/** A malformed request that is not about one object's fields (bad YAML, bad query). */
export class BadRequestError extends FlotillaError {
  override readonly name = "BadRequestError";
  constructor(message: string, readonly causes: FieldError[] = [], options?: { cause?: unknown }) {
    super("BadRequest", message, options);
  }
  override get details() {
    return this.causes.length ? { causes: causesOf(this.causes) } : undefined;
  }
}

/** A watch asked for a resourceVersion older than the retained history. */
export class GoneError extends FlotillaError {
  override readonly name = "GoneError";
  constructor(message: string, options?: { cause?: unknown }) {
    super("Expired", message, options);
  }
}

/** A dependency (database, member cluster, peer service) cannot be reached; retry later. */
export class UnavailableError extends FlotillaError {
  override readonly name = "UnavailableError";
  constructor(message: string, options?: { cause?: unknown }) {
    super("ServiceUnavailable", message, options);
  }
}

export class MethodNotAllowedError extends FlotillaError {
  override readonly name = "MethodNotAllowedError";
  constructor(message: string, options?: { cause?: unknown }) {
    super("MethodNotAllowed", message, options);
  }
}

export class UnsupportedMediaTypeError extends FlotillaError {
  override readonly name = "UnsupportedMediaTypeError";
  constructor(message: string, options?: { cause?: unknown }) {
    super("UnsupportedMediaType", message, options);
  }
}

/** No credentials, or credentials no authenticator accepts (401). */
export class UnauthorizedError extends FlotillaError {
  override readonly name = "UnauthorizedError";
  constructor(message = "Unauthorized", options?: { cause?: unknown }) {
    super("Unauthorized", message, options);
  }
}

/** Over the caller's request rate or its open watches (429, with Retry-After). */
export class TooManyRequestsError extends FlotillaError {
  override readonly name = "TooManyRequestsError";
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super("TooManyRequests", message);
  }
  override get details() {
    return { retryAfterSeconds: this.retryAfterSeconds };
  }
}

/** An authenticated user asked for something no rule allows (403); details name the resource as Kubernetes does. */
export class ForbiddenError extends FlotillaError {
  override readonly name = "ForbiddenError";
  constructor(
    message: string,
    private readonly resource?: { group?: string; kind?: string; name?: string },
  ) {
    super("Forbidden", message);
  }
  override get details() {
    return this.resource;
  }
}

/** Something failed that is no fault of the caller's; the message says nothing of what. */
export class InternalError extends FlotillaError {
  override readonly name = "InternalError";
  constructor(message = INTERNAL_MESSAGE, options?: { cause?: unknown }) {
    super("InternalError", message, options);
  }
}

export function isConflict(e: unknown): e is ConflictError {
  return e instanceof Error && e.name === "ConflictError";
}
export function isNotFound(e: unknown): e is NotFoundError {
  return e instanceof Error && e.name === "NotFoundError";
}
