import { Metrics, ServiceHost, SpanKind, tracer } from "@flotilla/runtime";
import { SpanStatusCode, context, trace, type Span } from "@opentelemetry/api";
import type { Socket } from "node:net";
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from "fastify";
import * as grpc from "@grpc/grpc-js";
import type { FleetShares, ObjectStore } from "@flotilla/store";
import type { Logger } from "@flotilla/log";
import { ObjectApi, type AdmissionSettings } from "./objects.js";
import { GuardedObjectApi } from "./admission/object-api.js";
import { MAX_REQUEST_BYTES, TooManyRequestsError, UnsupportedMediaTypeError } from "@flotilla/api";
import { BODY_MEDIA_TYPES, checkCharset, mediaType, registerKubeRoutes } from "./http/routes.js";
import { toHttpError } from "./logic/status.js";
import { registerOpenApiRoutes } from "./http/openapi.js";
import { docsPage } from "./http/docs.js";
import { portalPage } from "./http/portal.js";
import { objectServiceDefinition, objectServiceHandlers } from "./grpc.js";
import { registerSimulationRoutes, schedulerClient, type SimulationClient } from "./http/simulations.js";
import { Gatekeeper, apiForUser, grpcGuard, registerAuth, registerTokenRequests, type LimitSettings } from "./http/auth.js";
import { openAuditLog, type AuditLog } from "./auth/audit.js";
import type { Access } from "./auth/access.js";
import { startEventCollector, type EventCollector, type EventCollectorOptions } from "./event-ttl.js";
import { registerClusterProxy, type ClusterProxySettings } from "./http/proxy.js";
import { registerCors } from "./http/cors.js";
import { CONNECT_PATHS, registerConnect } from "./http/connect.js";

export interface GatewayDeps {
  store: ObjectStore;
  log: Logger;
  settings: AdmissionSettings;
  /** Readiness probe of the dependencies (database reachable). */
  ready: () => Promise<boolean>;
  /** Who may call (authentication, then RBAC); started and stopped with the gateway. */
  access: Access;
  /** Where writes and refusals are recorded (default: nowhere). */
  audit?: AuditLog;
  /** Per-identity request rate and watches (default DEFAULT_LIMITS). */
  limits?: LimitSettings;
  /** Leases of the per-user limits across the gateway replicas (started and stopped with the gateway); absent, the limits are this process's. */
  shares?: FleetShares;
  /** Serve HTTPS and gRPC over TLS with this certificate and key (PEM); without, plaintext. */
  tls?: { cert: Buffer; key: Buffer };
  version?: string;
  /** The scheduler's Simulate API behind POST .../simulations: a client, or its gRPC address (host:port) and how to reach it (TLS, the gateway's own token). */
  scheduler?: SimulationClient | { address: string; credentials: grpc.ChannelCredentials };
  /** Events are deleted this long after they were last seen (EVENT_TTL); absent or 0: kept. Runs from start() to stop(). */
  eventTtl?: Pick<EventCollectorOptions, "sql" | "ttlMs" | "everyMs" | "batch" | "election">;
  /** The cluster proxy's endpoint rules and wait (default: https members only, 10 s). */
  proxy?: ClusterProxySettings;
  /** The process's metrics registry (default: one of its own). */
  metrics?: Metrics;
  /** Browser portals on these origins may call the REST API and the Connect endpoint (CORS_ALLOWED_ORIGINS; default none: CORS off). */
  cors?: { allowedOrigins: readonly string[] };
}

/** The gateway's own metric names. */
export const GATEWAY_METRICS = {
  requests: "flotilla_gateway_requests_total",
  requestDuration: "flotilla_gateway_request_duration_seconds",
  eventsExpired: "flotilla_gateway_events_expired_total",
} as const;

export interface Gateway {
  http: FastifyInstance;
  api: ObjectApi;
  metrics: Metrics;
  /** Listens on host:port (REST) and host:grpcPort (gRPC; 0 = none). Returns the bound addresses. */
  start(o: { host: string; port: number; grpcPort?: number }): Promise<{ url: string; grpcAddress?: string }>;
  stop(): Promise<void>;
}

/** Answers an error as a Kubernetes Status (toHttpError); a 5xx is logged, its body says nothing of the cause. */
function sendError(reply: FastifyReply, err: unknown): void {
  if (err instanceof TooManyRequestsError) void reply.header("retry-after", String(err.retryAfterSeconds));
  const mapped = toHttpError(err);
  if (mapped.code >= 500) reply.log.error({ err }, "request failed");
  void reply.code(mapped.code).type("application/json").send(mapped.body);
}

/**
 * A request that node's HTTP parser rejects (a malformed request line or header, headers too
 * large, a timeout) is answered with a Status before the connection is closed (fastify's default
 * answers in its own shape).
 */
function statusOnClientError(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const [code, reason, message] =
    err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? [408, "Timeout", "the request timed out"] : err.code === "HPE_HEADER_OVERFLOW" ? [431, "BadRequest", "the request headers are too large"] : [400, "BadRequest", "the request is not valid HTTP"];
  const body = JSON.stringify({ apiVersion: "v1", kind: "Status", metadata: {}, status: "Failure", message, reason, code });
  if (socket.writable) socket.write(`HTTP/1.1 ${code} ${reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`);
  socket.destroy(err);
}

export function buildGateway(deps: GatewayDeps): Gateway {
  // member credentials: Secret values never leave the gateway; inline Cluster tokens move into Secrets
  const api = new GuardedObjectApi(deps.store, deps.settings);
  const http = Fastify({
    ...(deps.tls ? { https: { cert: deps.tls.cert, key: deps.tls.key } } : {}),
    loggerInstance: deps.log.child({ component: "http" }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // Kubernetes' request limit: a bigger body is a 413 RequestEntityTooLarge Status
    bodyLimit: MAX_REQUEST_BYTES,
    // errors fastify finds before any hook runs (a malformed percent-escape, a too long URL) as
    // Status bodies, once the caller is authenticated: an anonymous caller gets its 401 first
    frameworkErrors: (err, req, reply) => {
      gate.authenticate({ authorization: req.headers.authorization, client: req.ip, record: {} }).then(
        () => sendError(reply, err),
        (e: unknown) => sendError(reply, e),
      );
    },
    clientErrorHandler: statusOnClientError,
  }) as unknown as FastifyInstance;

  // Bodies are decoded by the routes (decodeDocument: JSON or YAML by media type), so that
  // malformed input is a Status 400/422; a media type no route reads is fastify's 415.
  http.removeAllContentTypeParsers();
  http.addContentTypeParser([...BODY_MEDIA_TYPES], { parseAs: "string" }, (req, body, done) => {
    try {
      checkCharset(req.headers["content-type"]);
    } catch (e) {
      return done(e as Error, undefined);
    }
    done(null, body);
  });

  const metrics = deps.metrics ?? new Metrics();
  const requests = metrics.counter(GATEWAY_METRICS.requests, "HTTP requests by method and code", ["method", "code"]);
  const latency = metrics.histogram(GATEWAY_METRICS.requestDuration, "HTTP request latency", [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1], ["method"]);
  const eventsExpired = metrics.counter(GATEWAY_METRICS.eventsExpired, "Events deleted after EVENT_TTL");
  // a span per request (a no-op while tracing is off); the handler runs in its context, so the
  // store keeps it on the outbox row of each write and the services it wakes continue the trace
  const spans = new WeakMap<object, Span>();
  http.addHook("preHandler", (req, _reply, done) => {
    const route = req.routeOptions.url ?? "unknown";
    const span = tracer().startSpan(`${req.method} ${route}`, { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method, "http.route": route, "url.path": req.url.split("?")[0]! } });
    spans.set(req, span);
    context.with(trace.setSpan(context.active(), span), done);
  });
  http.addHook("onResponse", async (req, reply) => {
    requests.inc({ method: req.method, code: String(reply.statusCode) });
    latency.observe({ method: req.method }, reply.elapsedTime / 1000);
    const span = spans.get(req);
    if (span) {
      span.setAttribute("http.response.status_code", reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  });

  http.setErrorHandler((err, req, reply) => {
    // fastify's 415 does not say which type came or which are taken
    const unknownType = (err as { code?: string }).code === "FST_ERR_CTP_INVALID_MEDIA_TYPE";
    sendError(reply, unknownType ? new UnsupportedMediaTypeError(`the body of the request was in an unknown format (${JSON.stringify(mediaType(req))}) - accepted media types include: ${BODY_MEDIA_TYPES.join(", ")}`) : err);
  });
  http.setNotFoundHandler((req, reply) => {
    void reply.code(404).send({ apiVersion: "v1", kind: "Status", metadata: {}, status: "Failure", message: `the server could not find the requested resource (${req.method} ${req.url.split("?")[0]})`, reason: "NotFound", code: 404 });
  });

  const gate = new Gatekeeper({ access: deps.access, audit: deps.audit ?? openAuditLog(""), limits: deps.limits, shares: deps.shares });
  // before authentication: a listed origin's preflight is answered without credentials, and a 401 carries the CORS headers
  registerCors(http, deps.cors?.allowedOrigins ?? []);
  registerAuth(http, gate, CONNECT_PATHS);
  // one guard for both typed fronts: gRPC on GRPC_PORT, Connect and gRPC-Web on this server
  const guard = grpcGuard(gate, api);
  registerConnect(http, deps.log.child({ component: "connect" }), guard);
  registerKubeRoutes(http, (req) => apiForUser(api, deps.access, req.user!));
  if (deps.access.serviceAccounts) registerTokenRequests(http, api, deps.access.serviceAccounts);
  const proxy = registerClusterProxy(http, { store: deps.store, gate, settings: deps.proxy ?? { allowHttp: "none", timeoutMs: 10_000 } });
  const scheduler = deps.scheduler && "address" in deps.scheduler ? schedulerClient(deps.scheduler.address, deps.scheduler.credentials) : deps.scheduler;
  registerSimulationRoutes(http, scheduler);
  registerOpenApiRoutes(http, deps.version ?? "0.1.0");
  http.get("/docs", async (_req, reply) => reply.type("text/html").send(docsPage()));
  http.get("/", async (_req, reply) => reply.type("text/html").send(portalPage()));
  http.get("/version", async () => ({ major: "1", minor: "29", gitVersion: `v1.29.0-flotilla.${deps.version ?? "0.1.0"}`, platform: `${process.platform}/${process.arch}` }));
  // /healthz, /livez, /readyz and /metrics (behind authentication like every non-public path), the gRPC object service
  let collector: EventCollector | undefined;
  const host = new ServiceHost({ name: "gateway", log: deps.log, metrics, ready: deps.ready, http })
    .grpc(objectServiceDefinition, objectServiceHandlers(deps.log.child({ component: "grpc" }), guard), {
      // the same request limit over gRPC (a bigger message is RESOURCE_EXHAUSTED)
      options: { "grpc.max_receive_message_length": MAX_REQUEST_BYTES },
      credentials: deps.tls ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: deps.tls.cert, private_key: deps.tls.key }], false) : undefined,
    })
    .closing(async () => {
      proxy.close();
      await gate.g.audit.close();
      if (deps.scheduler && "address" in deps.scheduler) scheduler?.close?.();
    })
    .step({ start: () => deps.access.authorizer.start(), stop: () => deps.access.authorizer.stop() })
    .step({ start: () => deps.shares?.start(), stop: () => deps.shares?.stop() })
    .step({
      start: () => {
        if (deps.eventTtl?.ttlMs) collector = startEventCollector({ store: deps.store, log: deps.log, ...deps.eventTtl, onDeleted: (n) => eventsExpired.inc(n) });
      },
      stop: () => collector?.stop(),
    });

  return {
    http,
    api,
    metrics,
    async start(o) {
      await host.start();
      return host.listen(o);
    },
    stop: () => host.stop(),
  };
}

// what tests outside this service need to build a gateway with identities of their own
export { RbacAuthorizer, TokenFileAuthenticator } from "./auth/access.js";
export { ServiceAccountTokens, ensureSigningKey } from "./auth/serviceaccounts.js";
export { unionAuthenticator } from "./auth/oidc.js";
