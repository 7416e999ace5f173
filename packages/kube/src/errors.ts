/** A Kubernetes `Status` body, as the API server answers errors. */
export interface StatusBody {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; group?: string; kind?: string; causes?: { field?: string; message?: string; reason?: string }[] };
}

/**
 * A failed member API call. `code` is the HTTP status, or 0 when no answer came back
 * (connection refused, reset, DNS, timeout): then `unreachable` is true.
 */
export class KubeApiError extends Error {
  override readonly name = "KubeApiError";
  readonly code: number;
  readonly reason: string;
  readonly status?: StatusBody;
  readonly unreachable: boolean;

  constructor(o: { code: number; reason?: string; message: string; status?: StatusBody; unreachable?: boolean; cause?: unknown }) {
    super(o.message, o.cause === undefined ? undefined : { cause: o.cause });
    this.code = o.code;
    this.reason = o.reason ?? o.status?.reason ?? (o.code === 0 ? "Unreachable" : "Unknown");
    this.status = o.status;
    this.unreachable = o.unreachable ?? o.code === 0;
  }
}

const isApiError = (e: unknown): e is KubeApiError => e instanceof Error && e.name === "KubeApiError";

export const isKubeNotFound = (e: unknown): boolean => isApiError(e) && e.code === 404;
export const isKubeAlreadyExists = (e: unknown): boolean => isApiError(e) && e.code === 409 && e.reason === "AlreadyExists";
export const isKubeConflict = (e: unknown): boolean => isApiError(e) && e.code === 409 && e.reason !== "AlreadyExists";
export const isKubeUnreachable = (e: unknown): boolean => isApiError(e) && e.unreachable;

/** Raised by `apply` when the member already holds an object it may not take over (conflictResolution Abort). */
export class ApplyConflictError extends Error {
  override readonly name = "ApplyConflictError";
}
