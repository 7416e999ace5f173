import { randomUUID } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { userInfoJson, type Attributes, type UserInfo } from "../logic/rbac.js";

/**
 * The audit log: one JSON line per write (create, update, patch, delete) and per refused
 * request (401, 403, 429), in Kubernetes' audit.k8s.io/v1 Event shape at level Metadata (who, what,
 * which object, the answer; never a body). Queried with jq, e.g. every denial of one user:
 *   jq -c 'select(.user.username=="vi" and .responseStatus.code==403)' audit.log
 */
export interface AuditEvent {
  apiVersion: "audit.k8s.io/v1";
  kind: "Event";
  level: "Metadata";
  auditID: string;
  stage: "ResponseComplete";
  requestURI: string;
  verb: string;
  user: { username: string; uid?: string; groups?: string[] };
  impersonatedUser?: { username: string; uid?: string; groups?: string[] };
  sourceIPs: string[];
  userAgent?: string;
  objectRef?: { resource: string; namespace?: string; name?: string; apiGroup: string; subresource?: string };
  responseStatus: { code: number; status?: string };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

export interface AuditRecord {
  /** The request: a REST URI, or the gRPC method. */
  uri: string;
  attrs?: Attributes;
  /** Who authenticated (the impersonator when there is one). */
  user?: UserInfo;
  impersonatedUser?: UserInfo;
  sourceIP?: string;
  userAgent?: string;
  code: number;
  receivedAt: Date;
  /** Why RBAC allowed or refused it. */
  reason?: string;
}

const WRITE = new Set(["create", "update", "patch", "delete", "deletecollection"]);

/** Whether a request is audited: every write, and every refusal. */
export function audited(r: Pick<AuditRecord, "attrs" | "code">): boolean {
  return r.code === 401 || r.code === 403 || r.code === 429 || (!!r.attrs && WRITE.has(r.attrs.verb) && r.attrs.resourceRequest);
}

export function auditEvent(r: AuditRecord, now = new Date()): AuditEvent {
  const a = r.attrs;
  return {
    apiVersion: "audit.k8s.io/v1",
    kind: "Event",
    level: "Metadata",
    auditID: randomUUID(),
    stage: "ResponseComplete",
    requestURI: r.uri,
    verb: a?.verb ?? "",
    user: r.user ? userInfoJson(r.user) : { username: "system:anonymous" },
    ...(r.impersonatedUser ? { impersonatedUser: userInfoJson(r.impersonatedUser) } : {}),
    sourceIPs: r.sourceIP ? [r.sourceIP] : [],
    ...(r.userAgent ? { userAgent: r.userAgent.slice(0, 256) } : {}),
    ...(a?.resourceRequest
      ? { objectRef: { resource: a.resource, apiGroup: a.apiGroup, ...(a.namespace ? { namespace: a.namespace } : {}), ...(a.name ? { name: a.name } : {}), ...(a.subresource ? { subresource: a.subresource } : {}) } }
      : {}),
    responseStatus: { code: r.code, ...(r.code >= 400 ? { status: "Failure" } : {}) },
    requestReceivedTimestamp: r.receivedAt.toISOString(),
    stageTimestamp: now.toISOString(),
    ...(r.reason ? { annotations: { [r.code === 403 ? "authorization.k8s.io/reason" : "authorization.k8s.io/decision"]: r.reason.slice(0, 512) } } : {}),
  };
}

export interface AuditLog {
  record(r: AuditRecord): void;
  close(): Promise<void>;
}

/** Writes audit lines to a file (appended, mode 0600), to stdout ("-"), or nowhere (""). */
export function openAuditLog(path: string): AuditLog {
  if (!path) return { record: () => {}, close: async () => {} };
  const out: WriteStream | NodeJS.WriteStream = path === "-" ? process.stdout : createWriteStream(path, { flags: "a", mode: 0o600 });
  return {
    record(r) {
      if (audited(r)) out.write(JSON.stringify(auditEvent(r)) + "\n");
    },
    close: () => (out === process.stdout ? Promise.resolve() : new Promise<void>((res) => (out as WriteStream).end(() => res()))),
  };
}
