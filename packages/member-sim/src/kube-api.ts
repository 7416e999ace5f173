import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { parse as parseYaml } from "yaml";
import { toTable, wantsTable } from "@flotilla/api";
import { groupVersion, type ApiResource } from "./api-catalog.js";
import { clusterOf, type RequestHandler, type SimCluster } from "./cluster.js";
import { listFilter } from "./selector.js";
import {
  badRequest,
  invalid,
  methodNotAllowed,
  notFound,
  pathNotFound,
  StatusError,
  success,
  unauthorized,
  unsupportedMediaType,
} from "./status.js";
import type { KObject, StoreEvent } from "./store.js";

/** The Kubernetes API front shared by every simulated cluster; each request finds its cluster by listener. */
export interface KubeApi {
  app: FastifyInstance;
  handler: RequestHandler;
  close(): Promise<void>;
}

export interface KubeApiOptions {
  /** Called with unexpected (5xx) errors; the client only sees "an internal error occurred". */
  onError?: (err: unknown, req: { method: string; url: string; cluster?: string }) => void;
  /** Called with every authenticated request a cluster receives (tests see who asked what). */
  onRequest?: (req: { cluster: string; method: string; url: string; userAgent?: string }) => void;
}

type Query = Record<string, string | undefined>;

const JSON_TYPES = new Set(["application/json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/json-patch+json"]);
const YAML_TYPES = new Set(["application/apply-patch+yaml", "application/yaml", "application/x-yaml", "text/yaml"]);

function mediaType(req: FastifyRequest): string {
  return (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
}

/** The request body as JSON data (YAML accepted where Kubernetes accepts it). */
function decodeBody(req: FastifyRequest): unknown {
  const raw = req.body as Buffer | undefined;
  if (!raw || raw.length === 0) return undefined;
  const type = mediaType(req);
  const text = raw.toString("utf8");
  if (JSON_TYPES.has(type) || type === "") {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw badRequest(`the body of the request is not valid JSON: ${(e as Error).message}`);
    }
  }
  if (YAML_TYPES.has(type)) {
    try {
      return JSON.parse(text);
    } catch {
      try {
        return parseYaml(text);
      } catch (e) {
        throw badRequest(`the body of the request is not valid YAML: ${(e as Error).message}`);
      }
    }
  }
  throw unsupportedMediaType(type);
}

const truthy = (v: string | undefined) => v === "true" || v === "1";

function resourceList(gv: string, resources: readonly ApiResource[]) {
  const out: Record<string, unknown>[] = [];
  for (const r of resources) {
    out.push({
      name: r.plural,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.verbs,
      ...(r.shortNames ? { shortNames: r.shortNames } : {}),
    });
    if (r.statusSubresource) {
      out.push({ name: `${r.plural}/status`, singularName: "", namespaced: r.namespaced, kind: r.kind, verbs: r.verbs.includes("update") ? ["get", "patch", "update"] : ["get"] });
    }
  }
  return { kind: "APIResourceList", apiVersion: "v1", groupVersion: gv, resources: out };
}

function apiGroups(c: SimCluster) {
  const groups = new Map<string, string[]>();
  for (const gv of c.apis.groupVersions()) {
    const i = gv.lastIndexOf("/");
    if (i < 0) continue;
    const g = gv.slice(0, i);
    let l = groups.get(g);
    if (!l) groups.set(g, (l = []));
    l.push(gv.slice(i + 1));
  }
  return [...groups.entries()].map(([name, versions]) => ({
    name,
    versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${name}/${versions[0]}`, version: versions[0] },
  }));
}

interface Target {
  res: ApiResource;
  /** undefined: all namespaces (collections of namespaced resources only). "" for cluster-scoped. */
  ns: string | undefined;
  name?: string;
  sub?: "status";
}

/** Resolves the path after /api/v1 or /apis/g/v. */
function target(c: SimCluster, gv: string, segs: string[]): Target {
  let ns: string | undefined;
  let rest = segs;
  if (segs[0] === "namespaces" && segs.length >= 3 && c.apis.byPlural(gv, segs[2]!)?.namespaced) {
    ns = segs[1]!;
    rest = segs.slice(2);
  }
  const [plural, name, sub, ...extra] = rest;
  const res = plural === undefined ? undefined : c.apis.byPlural(gv, plural);
  if (!res || extra.length) throw pathNotFound();
  if (sub !== undefined && (sub !== "status" || !res.statusSubresource)) throw pathNotFound();
  if (res.namespaced && ns === undefined && name !== undefined) throw pathNotFound();
  if (!res.namespaced) ns = "";
  return { res, ns, ...(name !== undefined ? { name } : {}), ...(sub ? { sub: "status" as const } : {}) };
}

function requireVerb(t: Target, verb: string, method: string): void {
  if (!t.res.verbs.includes(verb)) throw methodNotAllowed(method, `${t.res.plural}${t.sub ? "/status" : ""}`);
}

function listOf(c: SimCluster, res: ApiResource, items: KObject[]) {
  return { apiVersion: groupVersion(res), kind: `${res.kind}List`, metadata: { resourceVersion: String(c.store.revision) }, items };
}

function serveWatch(c: SimCluster, t: Target, filter: ((o: KObject) => boolean) | undefined, q: Query, reply: FastifyReply, table: boolean): void {
  const rv = q.resourceVersion;
  let backlog: StoreEvent[] | undefined = [];
  let initial: KObject[] = [];
  if (rv === undefined || rv === "" || rv === "0") initial = c.store.list(t.res, t.ns, filter);
  else {
    const n = Number(rv);
    if (!Number.isInteger(n) || n < 0) throw badRequest(`invalid resourceVersion ${JSON.stringify(rv)}`);
    backlog = c.store.eventsSince(n);
  }
  const matches = (e: StoreEvent) =>
    e.resource.group === t.res.group &&
    e.resource.plural === t.res.plural &&
    (t.ns === undefined || t.ns === "" || (e.object.metadata.namespace ?? "") === t.ns) &&
    (t.name === undefined || e.object.metadata.name === t.name) &&
    (!filter || filter(e.object));
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache, private" });
  // the headers go at once, also to a watch with nothing to send yet
  raw.flushHeaders();
  // kubectl get -w asks for each event's object as a one-row Table
  const asTable = (o: KObject) => toTable(t.res, [o], { resourceVersion: o.metadata.resourceVersion }, { includeObject: q.includeObject });
  const send = (type: string, object: unknown) => raw.write(JSON.stringify({ type, object: table && type !== "ERROR" ? asTable(object as KObject) : object }) + "\n");
  if (!backlog) {
    send("ERROR", new StatusError(410, "Expired", `too old resource version: ${rv} (${c.store.revision})`).toStatus());
    raw.end();
    return;
  }
  for (const o of initial) if (t.name === undefined || o.metadata.name === t.name) send("ADDED", o);
  for (const e of backlog) if (matches(e)) send(e.type, e.object);
  let timer: NodeJS.Timeout | undefined;
  const end = () => {
    unsubscribe();
    if (timer) clearTimeout(timer);
    c.watches.delete(end);
    if (!raw.writableEnded) raw.end();
  };
  const unsubscribe = c.store.subscribe((e) => {
    if (matches(e)) send(e.type, e.object);
  });
  c.watches.add(end);
  const timeout = Number(q.timeoutSeconds);
  if (Number.isFinite(timeout) && timeout > 0) timer = setTimeout(end, timeout * 1000);
  raw.on("close", end);
}

async function serveResource(req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const c = clusterOf(req.raw)!;
  const q = req.query as Query;
  const wild = (req.params as { "*"?: string })["*"] ?? "";
  let segs: string[];
  try {
    segs = wild.split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    throw pathNotFound();
  }
  let gv: string;
  if (req.url.startsWith("/apis/")) {
    if (segs.length === 1) {
      if (req.method !== "GET") throw methodNotAllowed(req.method, "API groups");
      const g = apiGroups(c).find((x) => x.name === segs[0]);
      if (!g) throw pathNotFound();
      return { kind: "APIGroup", apiVersion: "v1", ...g };
    }
    gv = `${segs[0]}/${segs[1]}`;
    segs = segs.slice(2);
  } else {
    gv = segs[0] ?? "";
    segs = segs.slice(1);
  }
  const resources = c.apis.inGroupVersion(gv);
  if (!resources) throw pathNotFound();
  if (segs.length === 0) {
    if (req.method !== "GET") throw methodNotAllowed(req.method, "discovery");
    return resourceList(gv, resources);
  }
  const t = target(c, gv, segs);
  const { res } = t;
  const ns = t.ns ?? "";
  const filter = () => listFilter(q.labelSelector, q.fieldSelector);
  // kubectl get: rows with Kubernetes' printer columns (Accept: application/json;as=Table;g=meta.k8s.io;v=v1)
  const table = wantsTable(req.headers.accept);
  const rows = (items: KObject[]) => toTable(res, items, { resourceVersion: String(c.store.revision) }, { includeObject: q.includeObject });
  if (q.dryRun) throw badRequest("dryRun is not supported by the member-cluster simulator");

  if (t.name === undefined) {
    switch (req.method) {
      case "GET":
        if (truthy(q.watch)) {
          requireVerb(t, "watch", req.method);
          serveWatch(c, t, filter(), q, reply, table);
          return reply;
        }
        requireVerb(t, "list", req.method);
        if (table) return rows(c.store.list(res, t.ns, filter()));
        return listOf(c, res, c.store.list(res, t.ns, filter()));
      case "POST": {
        requireVerb(t, "create", req.method);
        if (res.namespaced && t.ns === undefined) throw methodNotAllowed(req.method, `${res.plural} in all namespaces`);
        const created = c.store.create(res, ns, decodeBody(req));
        return reply.code(201).send(created);
      }
      case "DELETE":
        requireVerb(t, "deletecollection", req.method);
        return listOf(c, res, c.store.deleteCollection(res, t.ns, filter()));
      default:
        throw methodNotAllowed(req.method, res.plural);
    }
  }

  const name = t.name;
  const sub = t.sub ? { subresource: t.sub } : {};
  switch (req.method) {
    case "GET": {
      if (truthy(q.watch)) {
        requireVerb(t, "watch", req.method);
        serveWatch(c, t, filter(), q, reply, table);
        return reply;
      }
      requireVerb(t, "get", req.method);
      const o = c.store.get(res, ns, name);
      if (!o) throw notFound(res, name);
      return table ? rows([o]) : o;
    }
    case "PUT":
      requireVerb(t, "update", req.method);
      return c.store.replace(res, ns, name, decodeBody(req), sub);
    case "PATCH": {
      requireVerb(t, "patch", req.method);
      const type = mediaType(req);
      const body = decodeBody(req);
      if (type === "application/apply-patch+yaml") {
        const manager = q.fieldManager;
        if (!manager) throw invalid(res, name, [{ field: "fieldManager", reason: "FieldValueRequired", message: "Required value: is required for apply patch" }]);
        const { object, created } = c.store.apply(res, ns, name, body, manager, sub);
        return reply.code(created ? 201 : 200).send(object);
      }
      if (type === "application/merge-patch+json" || type === "application/strategic-merge-patch+json") {
        return c.store.patch(res, ns, name, body, sub);
      }
      throw unsupportedMediaType(type);
    }
    case "DELETE": {
      requireVerb(t, "delete", req.method);
      if (t.sub) throw methodNotAllowed(req.method, `${res.plural}/status`);
      const opts = decodeBody(req) as { preconditions?: { uid?: string; resourceVersion?: string } } | undefined;
      const { object, finalizing } = c.store.delete(res, ns, name, opts?.preconditions ? { preconditions: opts.preconditions } : {});
      return finalizing ? object : success(res, name, object.metadata.uid);
    }
    default:
      throw methodNotAllowed(req.method, res.plural);
  }
}

const REASONS: Record<number, string> = { 400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed", 413: "RequestEntityTooLarge", 415: "UnsupportedMediaType" };

export async function buildKubeApi(opts: KubeApiOptions = {}): Promise<KubeApi> {
  let handler: RequestHandler | undefined;
  const app = Fastify({
    logger: false,
    bodyLimit: 16 * 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 4096 },
    // Each cluster has its own http.Server (see SimCluster); they all share this handler.
    serverFactory: (h) => {
      handler = h;
      return http.createServer(h);
    },
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_req, body, done) => done(null, body));

  app.addHook("onRequest", async (req, reply) => {
    const c = clusterOf(req.raw);
    if (!c) return reply.code(404).send(pathNotFound().toStatus());
    const f = c.fault;
    if (f.mode === "slow" && f.latencyMs) await sleep(f.latencyMs);
    if (req.headers.authorization !== `Bearer ${c.token}`) return reply.code(401).send(unauthorized().toStatus());
    opts.onRequest?.({ cluster: c.name, method: req.method, url: req.url, ...(req.headers["user-agent"] ? { userAgent: req.headers["user-agent"] } : {}) });
  });

  app.setErrorHandler((err, req, reply) => {
    if (err instanceof StatusError) return reply.code(err.code).send(err.toStatus());
    const e = err as { name?: string; message?: string; statusCode?: number };
    if (e.name === "BadRequestError") return reply.code(400).send(new StatusError(400, "BadRequest", e.message ?? "bad request").toStatus());
    if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
      return reply.code(e.statusCode).send(new StatusError(e.statusCode, REASONS[e.statusCode] ?? "BadRequest", e.message ?? "bad request").toStatus());
    }
    opts.onError?.(err, { method: req.method, url: req.url, ...(clusterOf(req.raw) ? { cluster: clusterOf(req.raw)!.name } : {}) });
    return reply.code(500).send(new StatusError(500, "InternalError", "an internal error occurred").toStatus());
  });

  app.setNotFoundHandler((_req, reply) => reply.code(404).send(pathNotFound().toStatus()));

  for (const probe of ["readyz", "healthz", "livez"] as const) {
    const serve = async (req: FastifyRequest, reply: FastifyReply) => {
      const c = clusterOf(req.raw)!;
      reply.type("text/plain; charset=utf-8");
      if (c.fault.mode === "not-ready" && probe !== "livez") {
        return reply.code(500).send(`[+]ping ok\n[-]etcd failed: reason withheld\n${probe} check failed\n`);
      }
      return "ok";
    };
    app.get(`/${probe}`, serve);
    app.get(`/${probe}/*`, serve);
  }

  app.get("/version", async (req) => {
    const c = clusterOf(req.raw)!;
    const m = /^v(\d+)\.(\d+)/.exec(c.kubernetesVersion);
    return {
      major: m?.[1] ?? "1",
      minor: m?.[2] ?? "29",
      gitVersion: c.kubernetesVersion,
      gitCommit: "0000000000000000000000000000000000000000",
      gitTreeState: "clean",
      buildDate: "2024-01-01T00:00:00Z",
      goVersion: "go1.21.5",
      compiler: "gc",
      platform: "linux/amd64",
    };
  });

  app.get("/api", async (req) => {
    const c = clusterOf(req.raw)!;
    return { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: `${c.host}:${c.port}` }] };
  });

  app.get("/apis", async (req) => ({ kind: "APIGroupList", apiVersion: "v1", groups: apiGroups(clusterOf(req.raw)!) }));

  const methods = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
  app.route({ method: [...methods], url: "/api/*", handler: serveResource });
  app.route({ method: [...methods], url: "/apis/*", handler: serveResource });

  await app.ready();
  if (!handler) throw new Error("fastify did not hand over its request handler");
  const h = handler;
  return { app, handler: h, close: () => app.close() };
}
