import { FlotillaError, type KubeStatus } from "@flotilla/api";

export interface HttpError {
  code: number;
  body: KubeStatus;
}

/**
 * Maps an error to an HTTP status and a Kubernetes Status body, once, at the edge (see
 * `FlotillaError.from`): anything unrecognised is a 500 that does not leak internals.
 */
export function toHttpError(err: unknown): HttpError {
  const e = FlotillaError.from(err);
  return { code: e.httpStatus, body: e.toStatus() };
}

export function successStatus(message = ""): KubeStatus {
  return { apiVersion: "v1", kind: "Status", metadata: {}, status: "Success", message, code: 200 };
}
