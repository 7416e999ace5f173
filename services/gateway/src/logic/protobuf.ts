import { BadRequestError } from "@flotilla/api";

/** Kubernetes' protobuf media type (what client-go sends for built-in kinds such as SelfSubjectAccessReview). */
export const PROTOBUF_MEDIA_TYPE = "application/vnd.kubernetes.protobuf";
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]); // "k8s\0"

/** The length-delimited fields of one protobuf message, by number (fixed-size fields skipped; varints into `varints` when given, else skipped). */
export function messageFields(b: Buffer, varints?: Map<number, number>): Map<number, Buffer[]> {
  const out = new Map<number, Buffer[]>();
  let i = 0;
  const varint = (): number => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      if (i >= b.length || shift > 49) throw new BadRequestError("the protobuf body is truncated or malformed");
      const c = b[i++]!;
      v += (c & 0x7f) * 2 ** shift;
      if (c < 0x80) return v;
    }
  };
  while (i < b.length) {
    const tag = varint();
    const field = Math.floor(tag / 8);
    switch (tag & 7) {
      case 0: {
        const v = varint();
        varints?.set(field, v);
        break;
      }
      case 1:
        i += 8;
        break;
      case 5:
        i += 4;
        break;
      case 2: {
        const n = varint();
        if (i + n > b.length) throw new BadRequestError("the protobuf body is truncated or malformed");
        out.set(field, [...(out.get(field) ?? []), b.subarray(i, i + n)]);
        i += n;
        break;
      }
      default:
        throw new BadRequestError("the protobuf body is truncated or malformed");
    }
  }
  if (i > b.length) throw new BadRequestError("the protobuf body is truncated or malformed");
  return out;
}

/** The object inside Kubernetes' protobuf envelope (magic, then runtime.Unknown whose field 2 is the raw object). */
export function unwrapEnvelope(body: Buffer): Buffer {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) throw new BadRequestError("the protobuf body does not start with Kubernetes' envelope");
  return messageFields(body.subarray(MAGIC.length)).get(2)?.[0] ?? Buffer.alloc(0);
}

const strings = (m: Map<number, Buffer[]>, names: Record<number, string>) => {
  const o: Record<string, string> = {};
  for (const [n, k] of Object.entries(names)) {
    const v = m.get(Number(n))?.at(-1);
    if (v !== undefined) o[k] = v.toString("utf8");
  }
  return o;
};

/**
 * A SelfSubjectAccessReview in protobuf (authorization/v1 generated.proto: spec = 2;
 * spec.resourceAttributes = 1 {namespace 1, verb 2, group 3, version 4, resource 5,
 * subresource 6, name 7}; spec.nonResourceAttributes = 2 {path 1, verb 2}) as its JSON spec.
 */
export function decodeSelfSubjectAccessReviewSpec(body: Buffer): Record<string, Record<string, string> | undefined> {
  const spec = messageFields(messageFields(unwrapEnvelope(body)).get(2)?.[0] ?? Buffer.alloc(0));
  const r = spec.get(1)?.[0];
  const n = spec.get(2)?.[0];
  return {
    resourceAttributes: r && strings(messageFields(r), { 1: "namespace", 2: "verb", 3: "group", 4: "version", 5: "resource", 6: "subresource", 7: "name" }),
    nonResourceAttributes: n && strings(messageFields(n), { 1: "path", 2: "verb" }),
  };
}

/** A SelfSubjectRulesReview in protobuf (spec = 2; spec.namespace = 1): the namespace asked about. */
export function decodeSelfSubjectRulesReviewNamespace(body: Buffer): string {
  const spec = messageFields(messageFields(unwrapEnvelope(body)).get(2)?.[0] ?? Buffer.alloc(0));
  return spec.get(1)?.[0]?.toString("utf8") ?? "";
}

/**
 * A TokenRequest in protobuf (authentication/v1 generated.proto: spec = 2; spec.audiences = 1
 * (repeated), spec.boundObjectRef = 3, spec.expirationSeconds = 4) as its JSON spec — what
 * `kubectl create token` sends.
 */
export function decodeTokenRequest(body: Buffer): { spec: Record<string, unknown> } {
  const varints = new Map<number, number>();
  const spec = messageFields(messageFields(unwrapEnvelope(body)).get(2)?.[0] ?? Buffer.alloc(0), varints);
  const audiences = (spec.get(1) ?? []).map((b) => b.toString("utf8"));
  const bound = spec.get(3)?.[0];
  return {
    spec: {
      ...(audiences.length ? { audiences } : {}),
      ...(varints.has(4) ? { expirationSeconds: varints.get(4) } : {}),
      ...(bound ? { boundObjectRef: strings(messageFields(bound), { 1: "kind", 2: "apiVersion", 3: "name", 4: "uid" }) } : {}),
    },
  };
}

const str = (b: Buffer | undefined) => (b === undefined ? undefined : b.toString("utf8"));
const strs = (m: Map<number, Buffer[]>, n: number) => (m.get(n) ?? []).map((b) => b.toString("utf8"));
const pairs = (m: Map<number, Buffer[]>, n: number): Record<string, string> | undefined => {
  const entries = (m.get(n) ?? []).map((e) => messageFields(e)).map((f) => [str(f.get(1)?.[0]) ?? "", str(f.get(2)?.[0]) ?? ""] as const);
  return entries.length ? Object.fromEntries(entries) : undefined;
};

/** meta/v1 ObjectMeta (generated.proto): the fields a create or update sets. */
function objectMeta(b: Buffer | undefined): Record<string, unknown> {
  const m = messageFields(b ?? Buffer.alloc(0));
  const out: Record<string, unknown> = {};
  for (const [n, k] of [[1, "name"], [2, "generateName"], [3, "namespace"], [5, "uid"], [6, "resourceVersion"]] as const) {
    const v = str(m.get(n)?.[0]);
    if (v) out[k] = v;
  }
  const labels = pairs(m, 11);
  const annotations = pairs(m, 12);
  if (labels) out.labels = labels;
  if (annotations) out.annotations = annotations;
  const finalizers = strs(m, 14);
  if (finalizers.length) out.finalizers = finalizers;
  return out;
}

/** rbac/v1 (generated.proto) Role, ClusterRole, RoleBinding and ClusterRoleBinding as JSON objects. */
const RBAC_KINDS: Record<string, (m: Map<number, Buffer[]>) => Record<string, unknown>> = {
  Role: (m) => ({ rules: (m.get(2) ?? []).map(policyRule) }),
  ClusterRole: (m) => ({ rules: (m.get(2) ?? []).map(policyRule) }),
  RoleBinding: binding,
  ClusterRoleBinding: binding,
};

function policyRule(b: Buffer): Record<string, unknown> {
  const m = messageFields(b);
  const out: Record<string, unknown> = {};
  for (const [n, k] of [[1, "verbs"], [2, "apiGroups"], [3, "resources"], [4, "resourceNames"], [5, "nonResourceURLs"]] as const) {
    const v = strs(m, n);
    if (v.length || n === 1) out[k] = v;
  }
  return out;
}

function binding(m: Map<number, Buffer[]>): Record<string, unknown> {
  const subjects = (m.get(2) ?? []).map((b) => {
    const s = messageFields(b);
    const o: Record<string, string> = {};
    for (const [n, k] of [[1, "kind"], [2, "apiGroup"], [3, "name"], [4, "namespace"]] as const) {
      const v = str(s.get(n)?.[0]);
      if (v) o[k] = v;
    }
    return o;
  });
  const r = messageFields(m.get(3)?.[0] ?? Buffer.alloc(0));
  return { subjects, roleRef: { apiGroup: str(r.get(1)?.[0]) ?? "", kind: str(r.get(2)?.[0]) ?? "", name: str(r.get(3)?.[0]) ?? "" } };
}

/**
 * An object client-go sent as protobuf, as JSON: the RBAC kinds (what `kubectl create role`,
 * `clusterrole`, `rolebinding` and `clusterrolebinding` send); undefined for any other kind.
 */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> | undefined {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) throw new BadRequestError("the protobuf body does not start with Kubernetes' envelope");
  const unknown = messageFields(body.subarray(MAGIC.length));
  const tm = messageFields(unknown.get(1)?.[0] ?? Buffer.alloc(0));
  const apiVersion = str(tm.get(1)?.[0]) ?? "";
  const kind = str(tm.get(2)?.[0]) ?? "";
  const decode = apiVersion === "rbac.authorization.k8s.io/v1" ? RBAC_KINDS[kind] : undefined;
  if (!decode) return undefined;
  const obj = messageFields(unknown.get(2)?.[0] ?? Buffer.alloc(0));
  return { apiVersion, kind, metadata: objectMeta(obj.get(1)?.[0]), ...decode(obj) };
}
