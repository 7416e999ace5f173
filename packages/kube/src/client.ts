import http from "node:http";
import https from "node:https";
import {
  HttpMethod,
  KubeConfig,
  KubernetesObjectApi,
  Watch,
  type KubernetesObject,
  type RequestContext,
  type V1APIResource,
} from "@kubernetes/client-node";
import type { KubeObject, MemberEndpoint } from "@flotilla/api";
import { ApplyConflictError, KubeApiError, isKubeAlreadyExists, isKubeConflict, isKubeNotFound, type StatusBody } from "./errors.js";
import { coveredBy, retainClusterFields } from "./retain.js";

/** Where a member's API server is and how to authenticate to it (shared with the rules that vet it). */
export type { MemberEndpoint };

export interface MemberClientOptions extends MemberEndpoint {
  /** The cluster's name, for messages. */
  name?: string;
  /** Per-request timeout (default 10 s). Watches are not limited by it. */
  timeoutMs?: number;
  /** Connections kept open to this member (default 64; keep-alive). */
  maxSockets?: number;
  /** fieldManager sent on writes (default "flotilla"). */
  fieldManager?: string;
  /** User-Agent of the requests (the member's audit log names the sender by it); node's default when absent. */
  userAgent?: string;
}

/** Identifies one object on a member. */
export interface ObjectHeader {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string };
}

export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** What a health probe saw: `online` when the server answered at all, `healthy` when it answered 200. */
export interface HealthResult {
  online: boolean;
  healthy: boolean;
  /** The HTTP status of the last endpoint asked (absent when nothing answered). */
  statusCode?: number;
  /** The endpoint that gave the verdict: /readyz, or /healthz when /readyz is not served. */
  path: string;
  error?: string;
  latencyMs: number;
}

/** A Cluster.status.apiEnablements entry. */
export interface APIEnablement {
  groupVersion: string;
  resources: { name: string; kind: string }[];
}

export interface DiscoveryResult {
  enablements: APIEnablement[];
  /** False when some group version could not be read (its resources are then missing). */
  complete: boolean;
  errors: string[];
}

export interface ListResult<T = KubeObject> {
  items: T[];
  resourceVersion: string;
}

export type ApplyAction = "created" | "updated" | "unchanged";

export interface ApplyOptions {
  /**
   * What the caller knows of the member object: the object (e.g. from an informer), `null` when
   * it knows the object is absent, undefined when it does not know (create first, read on conflict).
   */
  observed?: KubeObject | null;
  /**
   * Called with the member object before an update: true allows it, a string refuses it with
   * that message (ApplyConflictError). Default: allow.
   */
  mayUpdate?: (observed: KubeObject) => true | string;
  /** Write even when the member already carries every desired field. */
  force?: boolean;
  signal?: AbortSignal;
}

export interface ApplyResult {
  action: ApplyAction;
  /** The member object after the call. */
  object: KubeObject;
}

/** Watch events as the API streams them. */
export interface WatchHandlers {
  onEvent(type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR", object: KubeObject): void;
  /** The stream ended (server closed it, the connection dropped, or it was never opened). */
  onDone(err: unknown): void;
}

export interface WatchHandle {
  stop(): void;
}

/** The Kubernetes object API with raw JSON bodies (no typed (de)serialisation: every field survives). */
class RawObjectApi extends KubernetesObjectApi {
  static forConfig(kc: KubeConfig): RawObjectApi {
    return kc.makeApiClient(RawObjectApi);
  }

  uriPath(spec: KubernetesObject, action: "create" | "delete" | "patch" | "read" | "list" | "replace"): Promise<string> {
    return this.specUriPath(spec, action);
  }

  lookup(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    return this.resource(apiVersion, kind);
  }

  /** Drops discovery cached for an apiVersion (after a 404 from a path built on it). */
  forget(apiVersion: string): void {
    delete this.apiVersionResourceCache[apiVersion];
  }

  async send(method: HttpMethod, path: string, o: { query?: Record<string, string | undefined>; body?: unknown; contentType?: string; signal?: AbortSignal }): Promise<{ status: number; text: string }> {
    const cfg = this.configuration;
    const ctx: RequestContext = cfg.baseServer.makeRequestContext(path, method);
    ctx.setHeaderParam("Accept", "application/json");
    for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined) ctx.setQueryParam(k, v);
    if (o.body !== undefined) {
      ctx.setHeaderParam("Content-Type", o.contentType ?? "application/json");
      ctx.setBody(typeof o.body === "string" ? o.body : JSON.stringify(o.body));
    }
    if (o.signal) ctx.setSignal(o.signal);
    const auth = cfg.authMethods.default;
    if (auth?.applySecurityAuthentication) await auth.applySecurityAuthentication(ctx);
    const resp = await cfg.httpApi.send(ctx).toPromise();
    return { status: resp.httpStatusCode, text: await resp.body.text() };
  }
}

function decodeCA(ca: string): string {
  const t = ca.trim();
  return t.startsWith("-----BEGIN") ? t : Buffer.from(t, "base64").toString("utf8");
}

interface SendOptions {
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  timeoutMs: number;
}

function combineSignals(timeoutMs: number, signal?: AbortSignal): AbortSignal {
  const t = AbortSignal.timeout(timeoutMs);
  return signal ? AbortSignal.any([t, signal]) : t;
}

/** Turns a transport failure (refused, reset, timeout) into an unreachable KubeApiError. */
function transportError(e: unknown, server: string, timeoutMs: number): KubeApiError {
  if (e instanceof KubeApiError) return e;
  const err = e as { name?: string; code?: string; message?: string; type?: string };
  const timedOut = err.name === "AbortError" || err.name === "TimeoutError" || err.type === "aborted";
  const message = timedOut ? `request to ${server} timed out after ${timeoutMs} ms` : `request to ${server} failed: ${err.code ?? err.message ?? String(e)}`;
  return new KubeApiError({ code: 0, reason: timedOut ? "Timeout" : "Unreachable", message, cause: e });
}

/** A connection that broke under a request without an answer (reset, closed, hang-up). */
function isConnectionReset(e: unknown): boolean {
  const err = e as { code?: string; message?: string; name?: string };
  if (err?.name === "AbortError") return false;
  return err?.code === "ECONNRESET" || err?.code === "EPIPE" || /socket hang up|ECONNRESET/.test(err?.message ?? "");
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A client for one member cluster over @kubernetes/client-node: the KubeConfig carries the
 * server, bearer token and TLS settings; KubernetesObjectApi resolves kinds to resource paths
 * through discovery (cached per client). Requests share one keep-alive agent per client and
 * carry raw JSON, so unknown fields of any kind survive a round trip.
 */
export class MemberClient {
  readonly name: string;
  readonly server: string;
  readonly kc: KubeConfig;
  private readonly api: RawObjectApi;
  private readonly agent: http.Agent;
  private readonly timeoutMs: number;
  private readonly fieldManager: string;
  private readonly userAgent: string | undefined;
  /** Requests go straight through node's http(s) with the pooled agent; only through a proxy do they take client-node's path. */
  private readonly direct: { request: typeof http.request; authorization?: string } | undefined;
  private closed = false;

  constructor(o: MemberClientOptions) {
    this.name = o.name ?? o.server;
    this.server = o.server.replace(/\/+$/, "");
    this.timeoutMs = o.timeoutMs ?? 10_000;
    this.fieldManager = o.fieldManager ?? "flotilla";
    this.userAgent = o.userAgent;
    const isHttp = this.server.startsWith("http:");
    // `timeout` closes idle pooled sockets; Node shortens it to the server's Keep-Alive hint minus 1 s,
    // so a socket is not reused just as the server closes it (ECONNRESET). Active requests and
    // watches are not cut by it (no listener destroys a busy socket on timeout).
    const agentOpts = { keepAlive: true, maxSockets: o.maxSockets ?? 64, keepAliveMsecs: 15_000, timeout: 30_000 };
    this.agent = isHttp
      ? new http.Agent(agentOpts)
      : new https.Agent({ ...agentOpts, rejectUnauthorized: !o.insecureSkipTLSVerify, ...(o.caData ? { ca: decodeCA(o.caData) } : {}) });
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: this.name,
          server: this.server,
          // client-node refuses plain http unless TLS verification is off; TLS itself is set on the agent.
          skipTLSVerify: isHttp || !!o.insecureSkipTLSVerify,
          ...(o.caData ? { caData: Buffer.from(decodeCA(o.caData)).toString("base64") } : {}),
          ...(o.proxyURL ? { proxyUrl: o.proxyURL } : {}),
        },
      ],
      users: [{ name: "flotilla", ...(o.token ? { token: o.token } : {}) }],
      contexts: [{ name: "member", cluster: this.name, user: "flotilla" }],
      currentContext: "member",
    });
    if (!o.proxyURL) {
      // client-node makes a new agent (a new connection) per request; keep one pooled agent instead.
      Object.defineProperty(kc, "createAgent", { value: () => this.agent });
      this.direct = { request: isHttp ? http.request : https.request, ...(o.token ? { authorization: `Bearer ${o.token}` } : {}) };
    }
    this.kc = kc;
    this.api = RawObjectApi.forConfig(kc);
  }

  /** Closes pooled connections; the client must not be used afterwards. */
  close(): void {
    this.closed = true;
    this.agent.destroy();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends once more when a kept-alive connection was reset under the request (the server closed it as it was reused). */
  private async send(method: HttpMethod, path: string, o: SendOptions): Promise<{ status: number; text: string }> {
    const once = () => (this.direct ? this.sendDirect(method, path, o) : this.api.send(method, path, { ...o, signal: combineSignals(o.timeoutMs, o.signal) }));
    try {
      return await once();
    } catch (e) {
      if (!isConnectionReset(e) || o.signal?.aborted) throw e;
      return once();
    }
  }

  /**
   * One raw request to the member, for the cluster proxy: `path` (absolute, with its query, already
   * checked by the caller) is appended to the path of the server URL, on the member's host and
   * nothing else; the member's token replaces any Authorization header. Resolves when the response
   * starts, with its body still streaming (the caller reads or destroys it); `timeoutMs` bounds the
   * wait for the response to start, never the stream. Not through spec.proxyURL.
   */
  forward(o: { method: string; path: string; headers: http.OutgoingHttpHeaders; body?: NodeJS.ReadableStream; timeoutMs?: number; signal?: AbortSignal }): Promise<http.IncomingMessage> {
    if (!this.direct) return Promise.reject(new Error(`cluster ${this.name}: forwarding through spec.proxyURL is not supported`));
    if (!o.path.startsWith("/")) return Promise.reject(new Error("the forwarded path must be absolute"));
    const d = this.direct;
    const base = new URL(this.server);
    const headers: http.OutgoingHttpHeaders = { ...o.headers };
    for (const k of Object.keys(headers)) if (k.toLowerCase() === "authorization" || k.toLowerCase() === "host") delete headers[k];
    if (d.authorization) headers.authorization = d.authorization;
    const timeoutMs = o.timeoutMs ?? this.timeoutMs;
    return new Promise((resolve, reject) => {
      const req = d.request(
        { protocol: base.protocol, hostname: base.hostname, port: base.port, path: base.pathname.replace(/\/+$/, "") + o.path, method: o.method, agent: this.agent, headers },
        (res) => {
          settle();
          resolve(res);
        },
      );
      const cut = (name: string, message: string) => req.destroy(Object.assign(new Error(message), { name }));
      const timer = setTimeout(() => cut("TimeoutError", `no answer within ${timeoutMs} ms`), timeoutMs);
      const onAbort = () => cut("AbortError", "the request was aborted");
      const settle = () => {
        clearTimeout(timer);
        o.signal?.removeEventListener("abort", onAbort);
      };
      req.on("error", (e) => (settle(), reject(e)));
      if (o.signal?.aborted) onAbort();
      else o.signal?.addEventListener("abort", onAbort, { once: true });
      if (o.body) o.body.pipe(req);
      else req.end();
    });
  }

  /** One request on the pooled agent, bounded by `timeoutMs` and `signal`; rejects with an AbortError or TimeoutError when cut. */
  private sendDirect(method: HttpMethod, path: string, o: SendOptions): Promise<{ status: number; text: string }> {
    const d = this.direct!;
    let url = this.server + path;
    const query = Object.entries(o.query ?? {}).filter((e): e is [string, string] => e[1] !== undefined);
    if (query.length) url += "?" + new URLSearchParams(query).toString();
    const headers: Record<string, string> = { Accept: "application/json" };
    if (d.authorization) headers.Authorization = d.authorization;
    if (this.userAgent) headers["User-Agent"] = this.userAgent;
    let body: string | undefined;
    if (o.body !== undefined) {
      body = typeof o.body === "string" ? o.body : JSON.stringify(o.body);
      headers["Content-Type"] = o.contentType ?? "application/json";
      headers["Content-Length"] = String(Buffer.byteLength(body));
    }
    return new Promise((resolve, reject) => {
      const cut = (name: string, message: string) => req.destroy(Object.assign(new Error(message), { name }));
      const timer = setTimeout(() => cut("TimeoutError", `timed out after ${o.timeoutMs} ms`), o.timeoutMs);
      const onAbort = () => cut("AbortError", "the request was aborted");
      const settle = () => {
        clearTimeout(timer);
        o.signal?.removeEventListener("abort", onAbort);
      };
      const req = d.request(url, { method, agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          settle();
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") });
        });
        res.on("error", (e) => (settle(), reject(e)));
      });
      req.on("error", (e) => (settle(), reject(e)));
      if (o.signal?.aborted) onAbort();
      else o.signal?.addEventListener("abort", onAbort, { once: true });
      req.end(body);
    });
  }

  private async request<T>(method: HttpMethod, path: string, o: RequestOptions & { query?: Record<string, string | undefined>; body?: unknown; contentType?: string } = {}): Promise<T> {
    const timeoutMs = o.timeoutMs ?? this.timeoutMs;
    let res: { status: number; text: string };
    try {
      res = await this.send(method, path, { ...o, timeoutMs });
    } catch (e) {
      throw transportError(e, this.server, timeoutMs);
    }
    const body = parseJson(res.text);
    if (res.status >= 200 && res.status < 300) return body as T;
    const status = (body && typeof body === "object" ? body : undefined) as StatusBody | undefined;
    throw new KubeApiError({
      code: res.status,
      status,
      message: status?.message ?? `${method} ${path}: HTTP ${res.status}${res.text ? `: ${res.text.slice(0, 200)}` : ""}`,
    });
  }

  /** The resource (plural, namespaced) serving a kind, from discovery; undefined when the member does not serve it. */
  async resourceFor(apiVersion: string, kind: string): Promise<{ name: string; namespaced: boolean } | undefined> {
    try {
      const r = await this.api.lookup(apiVersion, kind);
      return r ? { name: r.name, namespaced: r.namespaced } : undefined;
    } catch (e) {
      const code = (e as { code?: number }).code;
      if (code === 404) return undefined;
      if (typeof code === "number") throw new KubeApiError({ code, message: `discovery of ${apiVersion} failed: HTTP ${code}`, cause: e });
      throw transportError(e, this.server, this.timeoutMs);
    }
  }

  private async pathOf(spec: ObjectHeader, action: "create" | "delete" | "read" | "list" | "replace"): Promise<string> {
    const r = await this.resourceFor(spec.apiVersion, spec.kind);
    if (!r) throw new KubeApiError({ code: 404, reason: "NotFound", message: `the member ${this.name} does not serve ${spec.kind} in ${spec.apiVersion}` });
    const copy = { apiVersion: spec.apiVersion, kind: spec.kind, metadata: { ...spec.metadata } } as KubernetesObject;
    return this.api.uriPath(copy, action);
  }

  /** Reads one object; undefined when it does not exist. */
  async get(ref: ObjectHeader, o: RequestOptions = {}): Promise<KubeObject | undefined> {
    try {
      return await this.request<KubeObject>(HttpMethod.GET, await this.pathOf(ref, "read"), o);
    } catch (e) {
      if (isKubeNotFound(e)) return undefined;
      throw e;
    }
  }

  async create(obj: KubeObject, o: RequestOptions = {}): Promise<KubeObject> {
    const path = await this.pathOf(obj, "create");
    try {
      return await this.request<KubeObject>(HttpMethod.POST, path, { ...o, body: obj, query: { fieldManager: this.fieldManager } });
    } catch (e) {
      // A real API server does not create namespaces on the fly; make the missing one and retry once.
      const details = (e as KubeApiError).status?.details;
      if (isKubeNotFound(e) && obj.metadata.namespace && details?.kind === "namespaces") {
        await this.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: obj.metadata.namespace } }, o).catch((err) => {
          if (!isKubeAlreadyExists(err)) throw err;
        });
        return this.request<KubeObject>(HttpMethod.POST, path, { ...o, body: obj, query: { fieldManager: this.fieldManager } });
      }
      throw e;
    }
  }

  /** PUT; the object's metadata.resourceVersion is the precondition (409 Conflict when stale). */
  async replace(obj: KubeObject, o: RequestOptions = {}): Promise<KubeObject> {
    return this.request<KubeObject>(HttpMethod.PUT, await this.pathOf(obj, "replace"), { ...o, body: obj, query: { fieldManager: this.fieldManager } });
  }

  /** Deletes (propagationPolicy Background by default); false when it was already gone. */
  async delete(ref: ObjectHeader, o: RequestOptions & { propagationPolicy?: "Background" | "Foreground" | "Orphan"; preconditions?: { uid?: string; resourceVersion?: string } } = {}): Promise<boolean> {
    const body = { apiVersion: "v1", kind: "DeleteOptions", propagationPolicy: o.propagationPolicy ?? "Background", ...(o.preconditions ? { preconditions: o.preconditions } : {}) };
    try {
      await this.request(HttpMethod.DELETE, await this.pathOf(ref, "delete"), { ...o, body });
      return true;
    } catch (e) {
      if (isKubeNotFound(e)) return false;
      throw e;
    }
  }

  /** Lists a kind in one namespace, or across all namespaces when `namespace` is absent. */
  async list<T = KubeObject>(apiVersion: string, kind: string, o: RequestOptions & { namespace?: string; labelSelector?: string; fieldSelector?: string } = {}): Promise<ListResult<T>> {
    const path = await this.pathOf({ apiVersion, kind, metadata: { namespace: o.namespace } }, "list");
    const r = await this.request<{ items?: T[]; metadata?: { resourceVersion?: string } }>(HttpMethod.GET, path, {
      ...o,
      query: { labelSelector: o.labelSelector, fieldSelector: o.fieldSelector },
    });
    return { items: r.items ?? [], resourceVersion: r.metadata?.resourceVersion ?? "" };
  }

  listNodes(o: RequestOptions = {}): Promise<ListResult> {
    return this.list("v1", "Node", o);
  }

  listPods(o: RequestOptions & { namespace?: string; fieldSelector?: string } = {}): Promise<ListResult> {
    return this.list("v1", "Pod", o);
  }

  /**
   * Creates or updates `desired` on the member (Karmada's ObjectWatcher): an update keeps the
   * member's resourceVersion, finalizers, ownerReferences and its own labels/annotations, keeps
   * fields member controllers own (Retain), and is skipped when the member already carries every
   * desired field (unless `force`). A stale observed copy is re-read once on a 409.
   */
  async apply(desired: KubeObject, o: ApplyOptions = {}): Promise<ApplyResult> {
    let observed = o.observed;
    const req = { signal: o.signal };
    if (!observed) {
      try {
        return { action: "created", object: await this.create(stripForCreate(desired), req) };
      } catch (e) {
        if (!isKubeAlreadyExists(e)) throw e;
      }
      observed = await this.get(desired, req);
      if (!observed) return { action: "created", object: await this.create(stripForCreate(desired), req) };
    }
    for (let attempt = 0; ; attempt++) {
      const verdict = o.mayUpdate ? o.mayUpdate(observed) : true;
      if (verdict !== true) throw new ApplyConflictError(verdict);
      const merged = retainClusterFields(desired, observed);
      if (!o.force && coveredBy(merged, observed)) return { action: "unchanged", object: observed };
      try {
        return { action: "updated", object: await this.replace(merged, req) };
      } catch (e) {
        if (isKubeNotFound(e)) return { action: "created", object: await this.create(stripForCreate(desired), req) };
        if (!isKubeConflict(e) || attempt >= 2) throw e;
      }
      const fresh = await this.get(desired, req);
      if (!fresh) return { action: "created", object: await this.create(stripForCreate(desired), req) };
      observed = fresh;
    }
  }

  /**
   * Probes `/readyz`, falling back to `/healthz` when /readyz answers 404 (upstream's
   * getClusterHealthStatus). Any answer means online; only 200 means healthy.
   */
  async health(o: RequestOptions = {}): Promise<HealthResult> {
    const t0 = performance.now();
    const timeoutMs = o.timeoutMs ?? this.timeoutMs;
    // one deadline for both paths
    const signal = combineSignals(timeoutMs, o.signal);
    const probe = async (path: string): Promise<number> => (await this.send(HttpMethod.GET, path, { signal, timeoutMs })).status;
    let path = "/readyz";
    try {
      let code = await probe(path);
      if (code === 404) {
        path = "/healthz";
        code = await probe(path);
      }
      return { online: true, healthy: code === 200, statusCode: code, path, latencyMs: performance.now() - t0 };
    } catch (e) {
      return { online: false, healthy: false, path, error: transportError(e, this.server, timeoutMs).message, latencyMs: performance.now() - t0 };
    }
  }

  /** GET /version. */
  version(o: RequestOptions = {}): Promise<{ gitVersion?: string; major?: string; minor?: string; platform?: string }> {
    return this.request(HttpMethod.GET, "/version", o);
  }

  /**
   * Every served group version with its resources (subresources left out), sorted by group
   * version: Cluster.status.apiEnablements. A group version that fails to load marks the result
   * incomplete (upstream's CompleteAPIEnablements=False) instead of failing the whole call.
   */
  async discovery(o: RequestOptions = {}): Promise<DiscoveryResult> {
    const core = await this.request<{ versions?: string[] }>(HttpMethod.GET, "/api", o);
    const groups = await this.request<{ groups?: { name: string; versions?: { groupVersion: string }[] }[] }>(HttpMethod.GET, "/apis", o);
    const gvs = [...(core.versions ?? []), ...(groups.groups ?? []).flatMap((g) => (g.versions ?? []).map((v) => v.groupVersion))];
    const errors: string[] = [];
    const lists = await Promise.all(
      gvs.map(async (gv) => {
        try {
          const l = await this.request<{ resources?: { name: string; kind: string }[] }>(HttpMethod.GET, gv.includes("/") ? `/apis/${gv}` : `/api/${gv}`, o);
          return { groupVersion: gv, resources: (l.resources ?? []).filter((r) => !r.name.includes("/")).map((r) => ({ name: r.name, kind: r.kind })).sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0)) };
        } catch (e) {
          errors.push(`${gv}: ${(e as Error).message}`);
          return undefined;
        }
      }),
    );
    const enablements = lists.filter((x): x is APIEnablement => !!x && x.resources.length > 0).sort((a, b) => (a.groupVersion < b.groupVersion ? -1 : a.groupVersion > b.groupVersion ? 1 : 0));
    return { enablements, complete: errors.length === 0 && enablements.length > 0, errors };
  }

  /**
   * Watches a kind (all namespaces unless given) from `resourceVersion`, through client-node's
   * Watch on the same pooled connection settings. `timeoutSeconds` makes the server end the
   * stream (the caller re-lists and watches again).
   */
  async watch(apiVersion: string, kind: string, o: { namespace?: string; labelSelector?: string; resourceVersion?: string; timeoutSeconds?: number }, h: WatchHandlers): Promise<WatchHandle> {
    const path = await this.pathOf({ apiVersion, kind, metadata: { namespace: o.namespace } }, "list");
    const w = new Watch(this.kc);
    const ac = await w.watch(
      path,
      { labelSelector: o.labelSelector, resourceVersion: o.resourceVersion, timeoutSeconds: o.timeoutSeconds, allowWatchBookmarks: true },
      (type, object) => h.onEvent(type as "ADDED", object as KubeObject),
      (err) => h.onDone(err),
    );
    return { stop: () => ac.abort() };
  }
}

/** Server-owned fields a create must not carry. */
function stripForCreate(obj: KubeObject): KubeObject {
  const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, generation: _g, managedFields: _mf, selfLink: _sl, ...meta } = obj.metadata as Record<string, unknown>;
  const { status: _s, ...rest } = obj;
  return { ...rest, metadata: meta } as KubeObject;
}
