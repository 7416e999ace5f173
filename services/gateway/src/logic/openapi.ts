import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import {
  ClusterSchema,
  ClusterOverridePolicySchema,
  ClusterPropagationPolicySchema,
  ClusterResourceBindingSchema,
  OverridePolicySchema,
  PropagationPolicySchema,
  ResourceBindingSchema,
  StatusSchema,
  WorkSchema,
} from "@flotilla/proto";
import { RESOURCE_TYPES, apiVersionOf, type ResourceType } from "@flotilla/api";

type Schema = Record<string, unknown>;

const TYPED: Record<string, DescMessage> = {
  Cluster: ClusterSchema,
  PropagationPolicy: PropagationPolicySchema,
  ClusterPropagationPolicy: ClusterPropagationPolicySchema,
  OverridePolicy: OverridePolicySchema,
  ClusterOverridePolicy: ClusterOverridePolicySchema,
  ResourceBinding: ResourceBindingSchema,
  ClusterResourceBinding: ClusterResourceBindingSchema,
  Work: WorkSchema,
};

function scalarSchema(t: ScalarType): Schema {
  switch (t) {
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BYTES:
      return { type: "string", format: "byte" };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return { type: "number" };
    default:
      return { type: "integer", format: t === ScalarType.INT64 || t === ScalarType.UINT64 || t === ScalarType.SINT64 ? "int64" : "int32" };
  }
}

/** JSON Schemas derived from the proto descriptors, so the API shapes are written once. */
export function messageSchemas(roots: DescMessage[]): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  const ref = (m: DescMessage): Schema => {
    if (m.typeName === "google.protobuf.Timestamp") return { type: "string", format: "date-time" };
    if (m.typeName === "google.protobuf.Struct") return { type: "object", additionalProperties: true };
    if (m.typeName === "google.protobuf.Value") return {};
    if (!out[m.typeName]) {
      out[m.typeName] = {};
      out[m.typeName] = build(m);
    }
    return { $ref: `#/components/schemas/${m.typeName}` };
  };
  const fieldSchema = (f: DescField): Schema => {
    switch (f.fieldKind) {
      case "scalar":
        return scalarSchema(f.scalar);
      case "enum":
        return { type: "string" };
      case "message":
        return ref(f.message);
      case "list":
        return { type: "array", items: f.listKind === "message" ? ref(f.message) : f.listKind === "scalar" ? scalarSchema(f.scalar) : { type: "string" } };
      case "map":
        return { type: "object", additionalProperties: f.mapKind === "message" ? ref(f.message) : f.mapKind === "scalar" ? scalarSchema(f.scalar) : { type: "string" } };
    }
  };
  const build = (m: DescMessage): Schema => ({
    type: "object",
    additionalProperties: false,
    properties: Object.fromEntries(m.fields.map((f) => [f.jsonName, fieldSchema(f)])),
  });
  for (const r of roots) ref(r);
  return out;
}

function pathsFor(t: ResourceType, schemaRef: Schema): Record<string, Schema> {
  const base = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
  const coll = t.namespaced ? `${base}/namespaces/{namespace}/${t.plural}` : `${base}/${t.plural}`;
  const item = `${coll}/{name}`;
  const ns = t.namespaced ? [{ name: "namespace", in: "path", required: true, schema: { type: "string" } }] : [];
  const name = [{ name: "name", in: "path", required: true, schema: { type: "string" } }];
  const status = { $ref: "#/components/schemas/flotilla.meta.v1.Status" };
  const errors = {
    "400": { description: "BadRequest", content: { "application/json": { schema: status } } },
    "404": { description: "NotFound", content: { "application/json": { schema: status } } },
    "409": { description: "AlreadyExists or Conflict", content: { "application/json": { schema: status } } },
    "422": { description: "Invalid", content: { "application/json": { schema: status } } },
  };
  const body = { required: true, content: { "application/json": { schema: schemaRef }, "application/yaml": { schema: schemaRef } } };
  const ok = (code: string) => ({ [code]: { description: "OK", content: { "application/json": { schema: schemaRef } } }, ...errors });
  const tag = [`${t.kind} (${apiVersionOf(t)})`];
  const listParams = [
    { name: "labelSelector", in: "query", schema: { type: "string" } },
    { name: "limit", in: "query", schema: { type: "integer", minimum: 0 }, description: "at most this many items; metadata.continue names the next page (0 or absent: the whole list, streamed)" },
    { name: "continue", in: "query", schema: { type: "string" }, description: "the previous page's metadata.continue" },
    { name: "watch", in: "query", schema: { type: "boolean" }, description: "stream newline-delimited {type, object} events" },
    { name: "resourceVersion", in: "query", schema: { type: "string" } },
  ];
  const paths: Record<string, Schema> = {
    [coll]: {
      get: { tags: tag, operationId: `list${t.kind}`, parameters: [...ns, ...listParams], responses: { "200": { description: "a list" } } },
      post: { tags: tag, operationId: `create${t.kind}`, parameters: ns, requestBody: body, responses: ok("201") },
    },
    [item]: {
      get: { tags: tag, operationId: `read${t.kind}`, parameters: [...ns, ...name], responses: ok("200") },
      put: { tags: tag, operationId: `replace${t.kind}`, parameters: [...ns, ...name], requestBody: body, responses: ok("200") },
      patch: {
        tags: tag,
        operationId: `patch${t.kind}`,
        parameters: [...ns, ...name],
        requestBody: {
          required: true,
          content: Object.fromEntries(["application/merge-patch+json", "application/strategic-merge-patch+json", "application/json-patch+json", "application/apply-patch+yaml"].map((c) => [c, { schema: { type: "object" } }])),
        },
        responses: ok("200"),
      },
      delete: { tags: tag, operationId: `delete${t.kind}`, parameters: [...ns, ...name], responses: ok("200") },
    },
  };
  if (t.namespaced) paths[`${base}/${t.plural}`] = { get: { tags: tag, operationId: `list${t.kind}ForAllNamespaces`, parameters: listParams, responses: { "200": { description: "a list" } } } };
  if (t.statusSubresource) {
    paths[`${item}/status`] = {
      get: { tags: tag, operationId: `read${t.kind}Status`, parameters: [...ns, ...name], responses: ok("200") },
      put: { tags: tag, operationId: `replace${t.kind}Status`, parameters: [...ns, ...name], requestBody: body, responses: ok("200") },
    };
  }
  return paths;
}

export function openApiDocument(version: string, extraPaths: Record<string, Schema> = {}): Schema {
  const schemas = messageSchemas([...Object.values(TYPED), StatusSchema]);
  const paths: Record<string, Schema> = {};
  for (const t of RESOURCE_TYPES) {
    const m = TYPED[t.kind];
    const schemaRef = m ? { $ref: `#/components/schemas/${m.typeName}` } : { type: "object", additionalProperties: true, description: `a ${t.kind} as Kubernetes defines it (stored as given)` };
    Object.assign(paths, pathsFor(t, schemaRef));
  }
  Object.assign(paths, extraPaths);
  return {
    openapi: "3.0.3",
    info: { title: "Flotilla API", version, description: "Karmada-compatible multi-cluster API: clusters, propagation policies, resource templates, bindings and works." },
    paths,
    components: { schemas },
  };
}
