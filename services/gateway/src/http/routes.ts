import { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { BadRequestError, decodeDocument, type DocumentFormat, type FieldError, type KubeObject, MethodNotAllowedError, NotFoundError, RESOURCE_TYPES, resourceByPlural, type ResourceRef, type ResourceType, UnsupportedMediaTypeError } from "@flotilla/api";
import type { ListStream } from "@flotilla/store";
import { apiGroup, apiGroupList, apiResourceList, apiVersions, groups } from "../logic/discovery.js";
import { PATCH_MEDIA_TYPES } from "../logic/patch.js";
import { openStreams, type OpenStreams } from "./open-streams.js";
import { PROTOBUF_MEDIA_TYPE, decodeProtobufObject } from "../logic/protobuf.js";
import { toTable, wantsTable } from "@flotilla/api";
import { successStatus, toHttpError } from "../logic/status.js";
import { fieldValidation, warningHeader } from "../logic/field-validation.js";
import { hasPlacementHistory } from "../logic/placement-history.js";
import { checkKey, checkParameters, type ListQuery, type ObjectApi, type Scope } from "../objects.js";

/** What a Kubernetes resource URL names. */
export interface ResourcePath {
  type: ResourceType;
  namespace: string;
  name?: string;
  subresource?: string;
}

/** Percent-decodes one path segment; a malformed escape is a BadRequestError. */
function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch (e) {
    throw new BadRequestError(`the URL path has a malformed percent-escape: ${JSON.stringify(s.slice(0, 100))}`, [], { cause: e });
  }
}

/**
 * Parses /api/v1/... and /apis/{group}/{version}/... resource paths
 * (cluster-scoped, namespaced, all-namespaces, subresources). Undefined when no kind matches.
 */
export function parseResourcePath(url: string): ResourcePath | "discovery" | undefined {
  const segs = url.split("?")[0]!.split("/").filter(Boolean).map(decodeSegment);
  let group: string;
  let rest: string[];
  if (segs[0] === "api") {
    if (segs.length <= 2) return "discovery";
    group = "";
    rest = segs.slice(2);
  } else if (segs[0] === "apis") {
    if (segs.length <= 3) return "discovery";
    group = segs[1]!;
    rest = segs.slice(3);
  } else return undefined;
  const version = segs[0] === "api" ? segs[1]! : segs[2]!;
  const find = (plural: string) => {
    const t = resourceByPlural(group, plural);
    return t && t.version === version ? t : undefined;
  };
  // namespaces/{ns}/{plural}[/{name}[/{sub}]]
  if (rest[0] === "namespaces" && rest.length >= 3) {
    const t = find(rest[2]!);
    if (t && t.namespaced && rest.length <= 5) return { type: t, namespace: rest[1]!, name: rest[3], subresource: rest[4] };
    if (group === "" && (rest[2] === "status" || rest[2] === "finalize") && rest.length === 3) {
      return { type: find("namespaces")!, namespace: "", name: rest[1], subresource: rest[2] };
    }
    return undefined;
  }
  const t = find(rest[0]!);
  if (!t || rest.length > 3) return undefined;
  if (t.namespaced && rest.length > 1) return undefined; // a namespaced kind by name needs its namespace
  return { type: t, namespace: "", name: rest[1], subresource: rest[2] };
}

/** Media types of objects (POST, PUT, DeleteOptions of a DELETE) and the format each is read in. */
export const OBJECT_MEDIA_TYPES: ReadonlyMap<string, DocumentFormat> = new Map([
  ["application/json", "json"],
  ["application/yaml", "yaml"],
  ["application/x-yaml", "yaml"],
  ["text/yaml", "yaml"],
]);

/** Every media type a request body may have; the server answers 415 to the rest before routing. */
export const BODY_MEDIA_TYPES: readonly string[] = [...OBJECT_MEDIA_TYPES.keys(), ...PATCH_MEDIA_TYPES.keys()];

export function mediaType(req: FastifyRequest): string {
  return (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
}

/**
 * A body's Content-Type may name no charset but UTF-8 (case-insensitive; none named is UTF-8
 * too), the only one the API reads JSON and YAML in: any other is a 415 before the body is decoded.
 */
export function checkCharset(contentType: string | undefined): void {
  for (const param of (contentType ?? "").split(";").slice(1)) {
    const eq = param.indexOf("=");
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== "charset") continue;
    const charset = param.slice(eq + 1).trim().replace(/^"(.*)"$/s, "$1").toLowerCase();
    if (charset !== "utf-8") throw new UnsupportedMediaTypeError(`the body's charset ${JSON.stringify(charset)} is not supported: send it in utf-8`);
  }
}

/**
 * The request body as a checked document (decodeDocument: JSON or YAML by its media type, safe
 * JSON data only), or undefined without one. A media type the verb does not take is a 415.
 */
export function readBody(req: FastifyRequest, accepted: ReadonlyMap<string, DocumentFormat>, ref: ResourceRef): unknown {
  const raw = req.body;
  if (raw === undefined || raw === null || raw === "") return undefined;
  const ct = mediaType(req);
  if (ct === PROTOBUF_MEDIA_TYPE && accepted === OBJECT_MEDIA_TYPES && Buffer.isBuffer(raw) && ref.group === RBAC_GROUP) {
    // client-go's `kubectl create role|rolebinding|...`; the result is checked as any JSON body
    const obj = decodeProtobufObject(raw);
    if (!obj) throw new UnsupportedMediaTypeError(`protobuf bodies are read for the RBAC kinds only; send this object as JSON or YAML (kubectl apply does)`);
    return decodeDocument(JSON.stringify(obj), "json", ref);
  }
  const format = accepted.get(ct);
  if (!format && ct === PROTOBUF_MEDIA_TYPE) throw new UnsupportedMediaTypeError("protobuf bodies are read for the RBAC kinds only; send this object as JSON or YAML (kubectl apply does)");
  if (!format) throw new UnsupportedMediaTypeError(`the body of the request was in an unknown format (${JSON.stringify(ct)}) - accepted media types include: ${[...accepted.keys()].join(", ")}`);
  return decodeDocument(String(raw), format, ref);
}

const RBAC_GROUP = "rbac.authorization.k8s.io";

const PATCH_FORMATS: ReadonlyMap<string, DocumentFormat> = new Map([...PATCH_MEDIA_TYPES].map(([t, p]) => [t, p.format]));

function listKind(t: ResourceType, r: { items: KubeObject[]; resourceVersion: string; continue?: string; remainingItemCount?: number }) {
  return {
    apiVersion: t.group ? `${t.group}/${t.version}` : t.version,
    kind: `${t.kind}List`,
    metadata: { resourceVersion: r.resourceVersion, continue: r.continue, remainingItemCount: r.remainingItemCount },
    items: r.items,
  };
}

/** `?labelSelector=&limit=&continue=`; a `limit` that is not an integer reaches the store as NaN, which rejects it naming the field. */
function listQuery(q: Record<string, string | undefined>): ListQuery {
  const limit = q.limit === undefined || q.limit === "" ? undefined : /^-?\d+$/.test(q.limit) ? Number(q.limit) : NaN;
  return { labelSelector: q.labelSelector, limit, continue: q.continue };
}

/** Characters of JSON gathered into one write while streaming a list. */
const LIST_CHUNK_CHARS = 64 * 1024;

/**
 * Sends the whole list without building it: the List's JSON is written as the items are read
 * from the store. The first item is read before anything is sent, so a failure to start is still
 * a Status; a failure after the first chunk cuts the connection (the client sees a truncated
 * response, never a short list that parses).
 */
async function sendListStream(reply: FastifyReply, t: ResourceType, list: ListStream<KubeObject>) {
  const it = list[Symbol.asyncIterator]();
  const first = await it.next();
  // the envelope as listKind writes it, up to the items' opening bracket
  const head = JSON.stringify(listKind(t, { items: [], resourceVersion: list.resourceVersion })).slice(0, -"]}".length);
  async function* body(): AsyncGenerator<string> {
    let buf = head;
    let sep = "";
    try {
      for (let r = first; !r.done; r = await it.next()) {
        buf += sep + JSON.stringify(r.value);
        sep = ",";
        if (buf.length >= LIST_CHUNK_CHARS) {
          yield buf;
          buf = "";
        }
      }
      yield buf + "]}";
    } finally {
      await it.return?.();
    }
  }
  return reply.type("application/json; charset=utf-8").send(Readable.from(body()));
}

/** GET on a collection: one page with a `limit`, else the whole list streamed. */
async function sendList(api: ObjectApi, s: Scope, q: Record<string, string | undefined>, reply: FastifyReply) {
  const lq = listQuery(q);
  if (lq.limit !== undefined && lq.limit !== 0) return listKind(s.type, await api.list(s, lq));
  return sendListStream(reply, s.type, await api.listStream(s, lq));
}

/** Streams newline-delimited watch events until the client goes away or timeoutSeconds pass. */
async function streamWatch(api: ObjectApi, s: Scope, req: FastifyRequest, reply: FastifyReply, q: Record<string, string | undefined>, open: OpenStreams, name?: string) {
  const ac = new AbortController();
  const timeout = Number(q.timeoutSeconds ?? 0);
  const timer = timeout > 0 ? setTimeout(() => ac.abort(), timeout * 1000) : undefined;
  req.raw.on("close", () => ac.abort());
  // a gateway that stops ends its watches (clients watch again from their resourceVersion, elsewhere)
  const unregister = open.add(() => ac.abort());
  // opening the watch validates resourceVersion (410 Gone, 422) before any header is sent
  const events = await api.watch(s, { labelSelector: q.labelSelector, resourceVersion: q.resourceVersion, signal: ac.signal });
  reply.hijack();
  reply.raw.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked", "cache-control": "no-cache" });
  reply.raw.flushHeaders();
  // kubectl get -w: each event's object is a one-row Table
  const table = wantsTable(req.headers.accept);
  const write = (e: { type: string; object: KubeObject }) => {
    if (name && e.object.metadata.name !== name) return;
    const object = table ? toTable(s.type, [e.object], { resourceVersion: e.object.metadata.resourceVersion }, { includeObject: q.includeObject }) : e.object;
    reply.raw.write(JSON.stringify({ type: e.type, object }) + "\n");
  };
  try {
    for await (const e of events) write(e);
  } catch (e) {
    const h = toHttpError(e);
    reply.raw.write(JSON.stringify({ type: "ERROR", object: h.body }) + "\n");
  } finally {
    if (timer) clearTimeout(timer);
    unregister();
    // when the server is closing, the connection goes too (a kept-alive one would hold close() up)
    reply.raw.end(() => {
      if (open.closing) req.raw.socket?.end();
    });
  }
}

/**
 * GET .../resourcebindings/{name}/history and .../clusterresourcebindings/{name}/history: the
 * binding's placement changes (authorized before the route as `get` on the `history`
 * subresource). Read-only and not watchable; `?limit=N` gives the newest N.
 */
async function placementHistory(api: ObjectApi, s: Scope, name: string, req: FastifyRequest, q: Record<string, string | undefined>) {
  if (req.method !== "GET") throw new MethodNotAllowedError(`${req.method} is not supported on the history of a binding: it is read-only (GET)`);
  if (q.watch !== undefined && q.watch !== "false" && q.watch !== "0") {
    throw new BadRequestError("the history of a binding cannot be watched: watch the binding, or read its history again", [{ field: "watch", reason: "FieldValueNotSupported", message: "watch is not supported on the history subresource" }]);
  }
  return api.history(s, name, { limit: listQuery(q).limit });
}

/** DeleteOptions' preconditions: a resourceVersion and a uid, both strings when given. */
function deletePreconditions(body: unknown): { resourceVersion?: string; uid?: string } {
  const pre = typeof body === "object" && body !== null ? (body as { preconditions?: unknown }).preconditions : undefined;
  if (pre === undefined || pre === null) return {};
  const errs: FieldError[] = [];
  if (typeof pre !== "object" || Array.isArray(pre)) errs.push({ field: "preconditions", reason: "FieldValueTypeInvalid", message: "must be an object" });
  else {
    for (const k of ["resourceVersion", "uid"] as const) {
      const v = (pre as Record<string, unknown>)[k];
      if (v !== undefined && v !== null && typeof v !== "string") errs.push({ field: `preconditions.${k}`, reason: "FieldValueTypeInvalid", message: "must be a string" });
    }
  }
  if (errs.length) throw new BadRequestError("the DeleteOptions are malformed", errs);
  return pre as { resourceVersion?: string; uid?: string };
}

/** `apiFor` gives the API as the request's user may use it (see ObjectApi.withWriteCheck). */
export function registerKubeRoutes(app: FastifyInstance, apiFor: (req: FastifyRequest) => ObjectApi) {
  const types = RESOURCE_TYPES;
  const watches = openStreams(app);
  app.get("/api", async () => apiVersions());
  app.get("/apis", async () => apiGroupList(types));

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const q = req.query as Record<string, string | undefined>;
    const p = parseResourcePath(req.url);
    if (p === "discovery") {
      const segs = req.url.split("?")[0]!.split("/").filter(Boolean);
      if (segs[0] === "api") {
        if (segs[1] !== "v1") throw new NotFoundError({ group: "", kind: "APIResourceList", name: segs[1] });
        return apiResourceList("", "v1", types);
      }
      const vs = groups(types).get(segs[1]!);
      if (!vs) throw new NotFoundError({ group: segs[1]!, kind: "APIGroup", name: segs[1] });
      if (segs.length === 2) return apiGroup(segs[1]!, vs);
      if (!vs.includes(segs[2]!)) throw new NotFoundError({ group: segs[1]!, kind: "APIResourceList", name: segs[2] });
      return apiResourceList(segs[1]!, segs[2]!, types);
    }
    if (!p) throw new NotFoundError({ group: "", kind: "resource", name: req.url.split("?")[0] }, undefined);
    checkParameters(q);
    checkKey(p.type, p.namespace, p.name);
    const ref: ResourceRef = { group: p.type.group, kind: p.type.kind, name: p.name };
    if (p.subresource === "history" && p.name && hasPlacementHistory(p.type)) return placementHistory(apiFor(req), { type: p.type, namespace: p.namespace }, p.name, req, q);
    if (p.subresource && (p.subresource !== "status" || !p.type.statusSubresource)) {
      throw new NotFoundError({ group: p.type.group, kind: `${p.type.kind}/${p.subresource}`, name: p.name });
    }
    const s: Scope = { type: p.type, namespace: p.namespace };
    const sub = p.subresource as "status" | undefined;
    const watch = q.watch === "true" || q.watch === "1";
    const options = req.method === "POST" ? "CreateOptions" : req.method === "PUT" ? "UpdateOptions" : req.method === "PATCH" ? "PatchOptions" : undefined;
    // fieldValidation=Warn: each dropped field is a Warning header (kubectl prints them); a patch retried on a conflict warns once
    const warnings = new Set<string>();
    const warn = (w: string) => void reply.header("warning", [...warnings.add(w)].map(warningHeader));
    const api = options ? apiFor(req).withFieldValidation(fieldValidation(q.fieldValidation, options), warn) : apiFor(req);
    switch (req.method) {
      case "GET":
        if (watch) return streamWatch(api, s, req, reply, q, watches, p.name);
        if (wantsTable(req.headers.accept)) {
          // kubectl get: rows with the kind's printer columns (a list is read a page at a time when it asks for one)
          if (p.name) return toTable(p.type, [await api.get(s, p.name)], {}, { includeObject: q.includeObject });
          const page = await api.list(s, listQuery(q));
          return toTable(p.type, page.items, page, { includeObject: q.includeObject });
        }
        if (p.name) return api.get(s, p.name);
        return sendList(api, s, q, reply);
      case "POST":
        if (p.name || (p.type.namespaced && !p.namespace)) throw new MethodNotAllowedError(`POST is not supported on ${req.url.split("?")[0]}`);
        reply.code(201);
        return api.create(s, readBody(req, OBJECT_MEDIA_TYPES, ref));
      case "PUT":
        if (!p.name) throw new MethodNotAllowedError(`PUT needs an object name`);
        return api.update(s, p.name, readBody(req, OBJECT_MEDIA_TYPES, ref), sub);
      case "PATCH": {
        if (!p.name) throw new MethodNotAllowedError(`PATCH needs an object name`);
        const pt = PATCH_MEDIA_TYPES.get(mediaType(req));
        if (!pt) throw new UnsupportedMediaTypeError(`the media type ${JSON.stringify(mediaType(req))} is not a patch type: use one of ${[...PATCH_MEDIA_TYPES.keys()].join(", ")}`);
        return api.patch(s, p.name, pt.type, readBody(req, PATCH_FORMATS, ref), sub);
      }
      case "DELETE": {
        if (!p.name) throw new MethodNotAllowedError("deleting a whole collection is not supported");
        const out = await api.delete(s, p.name, deletePreconditions(readBody(req, OBJECT_MEDIA_TYPES, ref)));
        return out ?? successStatus();
      }
      default:
        throw new MethodNotAllowedError(`${req.method} is not supported`);
    }
  };
  for (const url of ["/api/*", "/apis/*"]) {
    app.route({ method: ["GET", "POST", "PUT", "PATCH", "DELETE"], url, handler });
  }
}
