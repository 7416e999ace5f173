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

export class NotFoundError extends Error {
  override readonly name = "NotFoundError";
  constructor(readonly ref: ResourceRef, options?: { cause?: unknown }) {
    super(`${ref.kind}${ref.group ? "." + ref.group : ""} "${ref.name ?? ""}" not found`, options);
  }
}

export class AlreadyExistsError extends Error {
  override readonly name = "AlreadyExistsError";
  constructor(readonly ref: ResourceRef, options?: { cause?: unknown }) {
    super(`${ref.kind}${ref.group ? "." + ref.group : ""} "${ref.name ?? ""}" already exists`, options);
  }
}

/** Optimistic concurrency failed: the object changed since it was read. */
export class ConflictError extends Error {
  override readonly name = "ConflictError";
  constructor(readonly ref: ResourceRef, detail = "the object has been modified; please apply your changes to the latest version and try again", options?: { cause?: unknown }) {
    super(`Operation cannot be fulfilled on ${ref.kind}${ref.group ? "." + ref.group : ""} "${ref.name ?? ""}": ${detail}`, options);
  }
}

/** Lists every bad field at once. */
export class InvalidError extends Error {
  override readonly name = "InvalidError";
  constructor(readonly ref: ResourceRef, readonly causes: FieldError[], options?: { cause?: unknown }) {
    super(`${ref.kind}${ref.group ? "." + ref.group : ""} "${ref.name ?? ""}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(", ")}`, options);
  }
}

/** A malformed request that is not about one object's fields (bad YAML, bad query). */
export class BadRequestError extends Error {
  override readonly name = "BadRequestError";
  constructor(message: string, readonly causes: FieldError[] = [], options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A watch asked for a resourceVersion older than the retained history. */
export class GoneError extends Error {
  override readonly name = "GoneError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A dependency (database, member cluster, peer service) cannot be reached; retry later. */
export class UnavailableError extends Error {
  override readonly name = "UnavailableError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export function isConflict(e: unknown): e is ConflictError {
  return e instanceof Error && e.name === "ConflictError";
}
export function isNotFound(e: unknown): e is NotFoundError {
  return e instanceof Error && e.name === "NotFoundError";
}
