/** A Kubernetes `Status` failure: the body of every error the simulated API answers. */
export interface StatusBody {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure" | "Success";
  message?: string;
  reason?: string;
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: { reason?: string; message: string; field?: string }[] };
  code: number;
}

/** An error that the HTTP edge turns into a Status with this code and reason. */
export class StatusError extends Error {
  override readonly name = "StatusError";
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusBody["details"],
  ) {
    super(message);
  }

  toStatus(): StatusBody {
    return {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

/** "deployments.apps" or "configmaps": how Kubernetes names a resource in messages. */
export interface GroupResource {
  group: string;
  plural: string;
  kind: string;
}
const qualified = (r: GroupResource) => (r.group ? `${r.plural}.${r.group}` : r.plural);
const kindQualified = (r: GroupResource) => (r.group ? `${r.kind}.${r.group}` : r.kind);

export const notFound = (r: GroupResource, name: string) =>
  new StatusError(404, "NotFound", `${qualified(r)} "${name}" not found`, { name, group: r.group, kind: r.plural });

export const alreadyExists = (r: GroupResource, name: string) =>
  new StatusError(409, "AlreadyExists", `${qualified(r)} "${name}" already exists`, { name, group: r.group, kind: r.plural });

export const conflict = (r: GroupResource, name: string, detail = "the object has been modified; please apply your changes to the latest version and try again") =>
  new StatusError(409, "Conflict", `Operation cannot be fulfilled on ${qualified(r)} "${name}": ${detail}`, { name, group: r.group, kind: r.plural });

export const invalid = (r: GroupResource, name: string, causes: { field: string; message: string; reason?: string }[]) =>
  new StatusError(422, "Invalid", `${kindQualified(r)} "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(", ")}`, {
    name,
    group: r.group,
    kind: r.kind,
    causes: causes.map((c) => ({ reason: c.reason ?? "FieldValueInvalid", message: c.message, field: c.field })),
  });

export const badRequest = (message: string) => new StatusError(400, "BadRequest", message);

export const pathNotFound = () => new StatusError(404, "NotFound", "the server could not find the requested resource");

export const methodNotAllowed = (method: string, what: string) =>
  new StatusError(405, "MethodNotAllowed", `${method} is not supported on ${what}`);

export const unsupportedMediaType = (type: string) =>
  new StatusError(415, "UnsupportedMediaType", `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml (got ${type})`);

export const unauthorized = () => new StatusError(401, "Unauthorized", "Unauthorized");

/** A success Status, as DELETE answers for most resources. */
export function success(r: GroupResource, name: string, uid?: string): StatusBody {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Success",
    details: { name, group: r.group, kind: r.plural, ...(uid ? { uid } : {}) },
    code: 200,
  };
}
