// The OpenAPI documents of the API, all derived from one source: the proto descriptors of the
// Karmada kinds (shapes) with their doc comments (PROTO_DOCS, descriptions), and the resource
// registry (paths, scope, subresources). kube-apiserver's layout is followed so that kubectl reads
// them: one OpenAPI v3 document per group-version (/openapi/v3/apis/{group}/{version}, listed by
// the /openapi/v3 index), schemas named as Kubernetes names them (io.karmada.policy.v1alpha1.
// PropagationPolicy, io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta) and marked with
// x-kubernetes-group-version-kind, operations marked with the kind and action and taking
// `fieldValidation`. /openapi.json (for /docs and code generators) is all of them in one document.
import { createHash } from "node:crypto";
import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { ListMetaSchema, ObjectMetaSchema, PROTO_DOCS, StatusSchema } from "@flotilla/proto";
import { RESOURCE_TYPES, apiVersionOf, schemaFor, type ResourceType } from "@flotilla/api";
import { groups } from "./discovery.js";

type Schema = Record<string, unknown>;

/** A group-version, as the /openapi/v3 index names it: "api/v1" or "apis/{group}/{version}". */
export interface GroupVersion {
  group: string;
  version: string;
}

export function groupVersionPath(gv: GroupVersion): string {
  return gv.group ? `apis/${gv.group}/${gv.version}` : `api/${gv.version}`;
}

/** Every served group-version, core first (as discovery lists them). */
export function servedGroupVersions(types: readonly ResourceType[] = RESOURCE_TYPES): GroupVersion[] {
  return [...groups(types)].flatMap(([group, versions]) => versions.map((version) => ({ group, version })));
}

const META = "io.k8s.apimachinery.pkg.apis.meta.v1";
/** Types of flotilla.meta.v1 that Kubernetes defines in core/v1 rather than meta/v1. */
const CORE_V1_TYPES = new Set(["Taint", "Toleration", "NodeSelectorRequirement", "ObjectReference"]);

/**
 * The Kubernetes name of a proto message in the document of `gv`: Karmada types by their group
 * reversed and version (io.karmada.policy.v1alpha1.Placement), metadata and core types by their
 * Kubernetes package. The work package holds both work.karmada.io versions (Work in v1alpha1,
 * the bindings in v1alpha2): its types take the version of the document they are in.
 */
export function schemaName(m: DescMessage, gv: GroupVersion): string {
  const dot = m.typeName.lastIndexOf(".");
  const pkg = m.typeName.slice(0, dot);
  const local = m.typeName.slice(dot + 1);
  switch (pkg) {
    case "flotilla.meta.v1":
      return `${CORE_V1_TYPES.has(local) ? "io.k8s.api.core.v1" : META}.${local}`;
    case "flotilla.policy.v1":
      return `io.karmada.policy.v1alpha1.${local}`;
    case "flotilla.cluster.v1":
      return `io.karmada.cluster.v1alpha1.${local}`;
    case "flotilla.work.v1":
      return `io.karmada.work.${gv.group === "work.karmada.io" ? gv.version : "v1alpha2"}.${local}`;
    default:
      return m.typeName;
  }
}

/** The Kubernetes name of a kind's schema (io.k8s.api.apps.v1.Deployment for the built-in kinds). */
export function kindSchemaName(t: ResourceType): string {
  const m = schemaFor(t);
  if (m) return schemaName(m, t);
  if (t.group === "apiextensions.k8s.io") return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${t.version}.${t.kind}`;
  return `io.k8s.api.${t.group ? t.group.split(".")[0] : "core"}.${t.version}.${t.kind}`;
}

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

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
      return { type: "number", format: "double" };
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return { type: "integer", format: "int64" };
    default:
      return { type: "integer", format: "int32" };
  }
}

/**
 * The component schemas that `roots` need, named for the document of `gv`, with the proto doc
 * comments as descriptions. A field of a message type is `allOf: [{$ref}]` beside its own
 * description, as Kubernetes writes it (a $ref's siblings are ignored in OpenAPI 3.0).
 */
export function messageSchemas(roots: DescMessage[], gv: GroupVersion): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  const inline = (m: DescMessage): Schema | undefined => {
    switch (m.typeName) {
      case "google.protobuf.Timestamp":
        return { type: "string", format: "date-time" };
      case "google.protobuf.Struct":
        return { type: "object", "x-kubernetes-preserve-unknown-fields": true };
      case "google.protobuf.Value":
        return { "x-kubernetes-preserve-unknown-fields": true };
      case "google.protobuf.ListValue":
        return { type: "array", items: { "x-kubernetes-preserve-unknown-fields": true } };
    }
    return undefined;
  };
  const use = (m: DescMessage): Schema => {
    const i = inline(m);
    if (i) return i;
    const name = schemaName(m, gv);
    if (!out[name]) {
      out[name] = {};
      out[name] = build(m);
    }
    return ref(name);
  };
  const element = (f: DescField, kind: "scalar" | "enum" | "message"): Schema => (kind === "message" ? use(f.message!) : kind === "enum" ? { type: "string" } : scalarSchema(f.scalar!));
  const fieldSchema = (f: DescField): Schema => {
    switch (f.fieldKind) {
      case "scalar":
        return scalarSchema(f.scalar);
      case "enum":
        return { type: "string" };
      case "message":
        return use(f.message);
      case "list":
        return { type: "array", items: element(f, f.listKind) };
      case "map":
        return { type: "object", additionalProperties: element(f, f.mapKind) };
    }
  };
  const build = (m: DescMessage): Schema => {
    const properties: Record<string, Schema> = {};
    for (const f of m.fields) {
      const s = fieldSchema(f);
      const description = PROTO_DOCS[`${m.typeName}.${f.name}`];
      properties[f.jsonName] = !description ? s : s.$ref ? { allOf: [s], description } : { ...s, description };
    }
    const description = PROTO_DOCS[m.typeName];
    return { ...(description ? { description } : {}), type: "object", properties };
  };
  for (const r of roots) use(r);
  return out;
}

const gvkOf = (t: ResourceType, kind = t.kind) => ({ group: t.group, kind, version: t.version });

const TYPE_META: Record<string, Schema> = {
  apiVersion: { type: "string", description: "APIVersion defines the versioned schema of this representation of an object." },
  kind: { type: "string", description: "Kind is a string value representing the REST resource this object represents." },
};

/**
 * A built-in Kubernetes kind the gateway stores as given (a resource template, RBAC, Events):
 * apiVersion, kind and metadata are described, every other field is kept whatever it holds.
 */
function builtinSchema(t: ResourceType): Schema {
  return {
    description: `${t.kind} (${apiVersionOf(t)}) as Kubernetes defines it. Flotilla stores it as given and checks only the fields it reads (metadata, and for workloads replicas, resource requests, selectors and tolerations); the fields beyond apiVersion, kind and metadata are not described here.`,
    type: "object",
    properties: { ...TYPE_META, metadata: { allOf: [ref(`${META}.ObjectMeta`)], description: PROTO_DOCS["flotilla.meta.v1.ObjectMeta"] } },
    "x-kubernetes-preserve-unknown-fields": true,
    "x-kubernetes-group-version-kind": [gvkOf(t)],
  };
}

function listSchema(t: ResourceType, itemName: string): Schema {
  return {
    description: `A list of ${t.kind} objects.`,
    type: "object",
    required: ["items"],
    properties: {
      ...TYPE_META,
      items: { type: "array", description: `The ${t.kind} objects.`, items: ref(itemName) },
      metadata: { allOf: [ref(`${META}.ListMeta`)], description: "Standard list metadata." },
    },
    "x-kubernetes-group-version-kind": [gvkOf(t, `${t.kind}List`)],
  };
}

/** PATCH media types as the documents list them (see pathsFor: strategic merge patches are taken too, for the built-in kinds). */
const PATCH_TYPES = ["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"];

const queryParam = (name: string, description: string, schema: Schema = { type: "string" }): Schema => ({ name, in: "query", description, schema });
const FIELD_VALIDATION = queryParam(
  "fieldValidation",
  "What to do with unknown fields in the object: Strict (the default for Flotilla's own kinds) refuses the request naming them, Warn drops them and answers with a Warning header per field, Ignore drops them. The built-in kinds keep every field, so none is unknown.",
);
const LIST_PARAMS = [
  queryParam("labelSelector", "A selector to restrict the list of returned objects by their labels."),
  queryParam("limit", "At most this many items; metadata.continue names the next page (0 or absent: the whole list).", { type: "integer" }),
  queryParam("continue", "The previous page's metadata.continue."),
  queryParam("watch", "Stream newline-delimited {type, object} events of the changes after resourceVersion.", { type: "boolean" }),
  queryParam("resourceVersion", "With watch: the version to stream the changes after."),
  queryParam("timeoutSeconds", "With watch: end the stream after this many seconds.", { type: "integer" }),
];

/**
 * The operations on one kind, as kube-apiserver describes them. kubectl reads three things here:
 * `x-kubernetes-group-version-kind` on each operation (to find a kind's paths), the
 * `fieldValidation` parameter of PATCH (then it leaves validation to the server) and the PATCH
 * media types. PATCH is listed without strategic-merge-patch+json, although the gateway takes it
 * for the built-in kinds: kubectl then computes the strategic merge patches of a built-in kind
 * from the Kubernetes types compiled into it (merge keys included) instead of from the permissive
 * schema here, which has none (and merge patches for the Karmada kinds, as for custom resources).
 */
function pathsFor(t: ResourceType, schemaName: string): Record<string, Schema> {
  const base = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
  const coll = t.namespaced ? `${base}/namespaces/{namespace}/${t.plural}` : `${base}/${t.plural}`;
  const item = `${coll}/{name}`;
  const ns = t.namespaced ? [{ name: "namespace", in: "path", required: true, description: "object name and auth scope, such as for teams and projects", schema: { type: "string", uniqueItems: true } }] : [];
  const name = [{ name: "name", in: "path", required: true, description: `name of the ${t.kind}`, schema: { type: "string", uniqueItems: true } }];
  const status = ref(`${META}.Status`);
  const errors = {
    "400": { description: "BadRequest", content: { "application/json": { schema: status } } },
    "401": { description: "Unauthorized" },
    "403": { description: "Forbidden", content: { "application/json": { schema: status } } },
    "404": { description: "NotFound", content: { "application/json": { schema: status } } },
    "409": { description: "AlreadyExists or Conflict", content: { "application/json": { schema: status } } },
    "422": { description: "Invalid: details.causes name every bad field", content: { "application/json": { schema: status } } },
  };
  const obj = ref(schemaName);
  const json = (schema: Schema) => ({ "application/json": { schema }, "application/yaml": { schema } });
  const ok = (...codes: string[]) => ({ ...Object.fromEntries(codes.map((c) => [c, { description: c === "201" ? "Created" : "OK", content: json(obj) }])), ...errors });
  const gvk = gvkOf(t);
  const op = (action: string, operationId: string, rest: Schema) => ({
    tags: [`${t.kind} (${apiVersionOf(t)})`],
    operationId,
    ...rest,
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": gvk,
  });
  const list = (operationId: string, parameters: Schema[]) =>
    op("list", operationId, { description: `list or watch objects of kind ${t.kind}`, parameters, responses: { "200": { description: "OK", content: { "application/json": { schema: ref(`${schemaName}List`) } } }, ...errors } });
  const body = { required: true, content: json(obj) };
  const read = (what: string, sub: string) => op("get", `read${t.kind}${sub}`, { description: `read ${what} of the specified ${t.kind}`, parameters: [...ns, ...name], responses: ok("200") });
  const replace = (what: string, sub: string) => op("put", `replace${t.kind}${sub}`, { description: `replace ${what} of the specified ${t.kind}`, parameters: [...ns, ...name, FIELD_VALIDATION], requestBody: body, responses: ok("200", "201") });
  const patch = (what: string, sub: string) =>
    op("patch", `patch${t.kind}${sub}`, {
      description: `partially update ${what} of the specified ${t.kind}`,
      parameters: [...ns, ...name, FIELD_VALIDATION, queryParam("fieldManager", "The name of the actor making the change (accepted, not recorded)."), queryParam("force", "Server-side apply: take over conflicting fields (accepted; Flotilla does not track field managers).", { type: "boolean" })],
      requestBody: { required: true, content: Object.fromEntries(PATCH_TYPES.map((c) => [c, { schema: { type: "object" } }])) },
      responses: ok("200", "201"),
    });
  const paths: Record<string, Schema> = {
    [coll]: {
      get: list(`list${t.namespaced ? "Namespaced" : ""}${t.kind}`, [...ns, ...LIST_PARAMS]),
      post: op("post", `create${t.namespaced ? "Namespaced" : ""}${t.kind}`, { description: `create a ${t.kind}`, parameters: [...ns, FIELD_VALIDATION], requestBody: body, responses: ok("201", "200") }),
    },
    [item]: {
      get: read("", ""),
      put: replace("", ""),
      patch: patch("", ""),
      delete: op("delete", `delete${t.kind}`, { description: `delete a ${t.kind} (finalizers are honoured; the objects it owns follow)`, parameters: [...ns, ...name], responses: ok("200") }),
    },
  };
  if (t.namespaced) paths[`${base}/${t.plural}`] = { get: list(`list${t.kind}ForAllNamespaces`, LIST_PARAMS) };
  if (t.statusSubresource) paths[`${item}/status`] = { get: read("status", "Status"), put: replace("status", "Status"), patch: patch("status", "Status") };
  return paths;
}

/** Kinds served in one group-version. */
function kindsOf(gv: GroupVersion, types: readonly ResourceType[]): ResourceType[] {
  return types.filter((t) => t.group === gv.group && t.version === gv.version);
}

/**
 * The OpenAPI v3 document of one group-version, as kube-apiserver serves it at
 * /openapi/v3/apis/{group}/{version}: its kinds' paths and every schema they use.
 */
export function groupVersionDocument(gv: GroupVersion, serverVersion: string, types: readonly ResourceType[] = RESOURCE_TYPES): Schema {
  const kinds = kindsOf(gv, types);
  const typed = kinds.flatMap((t) => schemaFor(t) ?? []);
  const schemas: Record<string, Schema> = messageSchemas([...typed, ObjectMetaSchema, ListMetaSchema, StatusSchema], gv);
  const paths: Record<string, Schema> = {};
  for (const t of kinds) {
    const name = kindSchemaName(t);
    if (schemaFor(t)) {
      schemas[name] = { ...schemas[name], "x-kubernetes-group-version-kind": [gvkOf(t)] };
    } else {
      schemas[name] = builtinSchema(t);
    }
    schemas[`${name}List`] = listSchema(t, name);
    Object.assign(paths, pathsFor(t, name));
  }
  return {
    openapi: "3.0.0",
    info: { title: "Flotilla", version: serverVersion },
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      securitySchemes: { BearerToken: { type: "apiKey", description: "Bearer Token authentication", name: "authorization", in: "header" } },
    },
    security: [{ BearerToken: [] }],
  };
}

/** A served OpenAPI document: its JSON and the hash clients cache it by (SHA-512, hex, as kube-apiserver). */
export interface ServedDocument {
  json: string;
  hash: string;
}

export function served(doc: unknown): ServedDocument {
  const json = JSON.stringify(doc);
  return { json, hash: createHash("sha512").update(json).digest("hex").toUpperCase() };
}

/** Every group-version's document, by its index path ("apis/policy.karmada.io/v1alpha1"). */
export function groupVersionDocuments(serverVersion: string, types: readonly ResourceType[] = RESOURCE_TYPES): Map<string, ServedDocument> {
  return new Map(servedGroupVersions(types).map((gv) => [groupVersionPath(gv), served(groupVersionDocument(gv, serverVersion, types))]));
}

/** The /openapi/v3 index: each document's path and the URL that names its current hash. */
export function openApiIndex(docs: ReadonlyMap<string, ServedDocument>): Schema {
  return { paths: Object.fromEntries([...docs].map(([p, d]) => [p, { serverRelativeURL: `/openapi/v3/${p}?hash=${d.hash}` }])) };
}

/** /openapi.json: every group-version's paths and schemas in one document. */
export function openApiDocument(serverVersion: string, types: readonly ResourceType[] = RESOURCE_TYPES): Schema {
  const paths: Record<string, Schema> = {};
  const schemas: Record<string, Schema> = {};
  for (const gv of servedGroupVersions(types)) {
    const d = groupVersionDocument(gv, serverVersion, types) as { paths: Record<string, Schema>; components: { schemas: Record<string, Schema> } };
    Object.assign(paths, d.paths);
    Object.assign(schemas, d.components.schemas);
  }
  return {
    openapi: "3.0.3",
    info: {
      title: "Flotilla API",
      version: serverVersion,
      description: "Karmada-compatible multi-cluster API: clusters, propagation policies, resource templates, bindings and works. kubectl reads the same schemas per group-version at /openapi/v3.",
    },
    paths,
    components: { schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))), securitySchemes: { BearerToken: { type: "http", scheme: "bearer" } } },
    security: [{ BearerToken: [] }],
  };
}
