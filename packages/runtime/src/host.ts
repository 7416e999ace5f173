import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import * as grpc from "@grpc/grpc-js";
import type { JetStreamClient, WakeUpConsumer } from "@flotilla/events";
import type { ObjectStore, Sql } from "@flotilla/store";
import type { Logger } from "@flotilla/log";
import type { Controller, ControllerOptions } from "./controller.js";
import { Metrics } from "./metrics.js";

/** What a controller service's `buildApp` is given (main.ts passes runService's context; tests their own). */
export interface ServiceDeps<C> {
  store: ObjectStore;
  /** The service's pool: the controllers' timers and the readiness probe. */
  sql: Sql;
  log: Logger;
  cfg: C;
  /** JetStream for wake-ups (stream and prefix from cfg); without it the controllers run on timers, resyncs and enqueue() alone. */
  js?: JetStreamClient;
  now?: () => Date;
  /** Reported as the events' source host (default: the hostname). */
  host?: string;
  /** Runtime overrides for every controller (tests shrink timerPollMs and backoff). */
  runtime?: Partial<Omit<ControllerOptions, "reconciler" | "sql" | "log" | "listKeys">>;
  /** Readiness of the dependencies (default: the database answers within 2 s). */
  ready?: () => Promise<boolean>;
  /** The process's metrics registry (default: one of its own). */
  metrics?: Metrics;
}

/** Something a service runs: started in the order declared, stopped in the reverse order. */
export interface HostStep {
  start?(): unknown;
  stop?(): unknown;
}

export interface ServiceHostOptions {
  /** The service's name (its log lines). */
  name: string;
  log: Logger;
  /** The process's metrics registry (default: one of its own); served on /metrics. */
  metrics?: Metrics;
  /** Readiness of the dependencies (Postgres, NATS); default: always. */
  ready?: () => Promise<boolean>;
  /** The HTTP server the endpoints go on (the gateway's API server); default: a new one. */
  http?: FastifyInstance;
}

export interface Listening {
  url: string;
  /** host:port of the gRPC server, when one was declared and a port given. */
  grpcAddress?: string;
}

/**
 * What every Flotilla service process serves and how it starts and stops, declared once:
 * `/healthz` and `/livez` (the process answers), `/readyz` (503 until everything declared has
 * started, then the dependencies' readiness), `/metrics` (one prom-client registry), the
 * controllers with their wake-up consumers, gRPC services, and the steps of the service itself.
 * A service's `app.ts` declares its parts on a host; `start()` runs them in that order;
 * `stop()` closes the servers, then stops the parts that started in the reverse order.
 */
export class ServiceHost {
  /** The paths every service serves: liveness (two names), readiness, metrics. */
  static readonly ENDPOINTS = ["/healthz", "/livez", "/readyz", "/metrics"] as const;
  readonly http: FastifyInstance;
  readonly metrics: Metrics;
  private readonly log: Logger;
  private readonly steps: HostStep[] = [];
  private readonly closers: Array<() => unknown> = [];
  private grpcServer?: grpc.Server;
  private grpcCredentials = grpc.ServerCredentials.createInsecure();
  private grpcBound = false;
  /** Steps whose start ran (or is running): the ones stop() stops. */
  private begun = 0;
  private up = false;
  private stopping?: Promise<void>;

  constructor(private readonly o: ServiceHostOptions) {
    this.log = o.log;
    this.metrics = o.metrics ?? new Metrics();
    this.http =
      o.http ??
      (Fastify({
        loggerInstance: o.log.child({ component: "http" }) as FastifyBaseLogger,
        logController: new LogController({ disableRequestLogging: true }),
      }) as unknown as FastifyInstance);
    const [healthz, livez, readyz, metrics] = ServiceHost.ENDPOINTS;
    this.http.get(healthz, async () => "ok");
    this.http.get(livez, async () => "ok");
    this.http.get(readyz, async (_req, reply) => {
      if (!this.up) return reply.code(503).send("not ready: starting");
      const ok = await (o.ready ?? (async () => true))().catch(() => false);
      return ok ? "ok" : reply.code(503).send("not ready: a dependency (database or NATS) is unreachable");
    });
    this.http.get(metrics, async (_req, reply) => reply.type(this.metrics.contentType).send(await this.metrics.text()));
  }

  /** True from the end of start() until stop(): everything declared runs. */
  get running(): boolean {
    return this.up;
  }

  /** A step of the service's own (a cache, a lease, a collector). */
  step(s: HostStep): this {
    this.steps.push(s);
    return this;
  }

  /** Releases something made when the service was built (a client, a file): at stop(), whether the service started or not, after the steps. */
  closing(fn: () => unknown): this {
    this.closers.push(fn);
    return this;
  }

  /** Controllers: counted in the registry, started here, stopped (after whatever was declared later) there. */
  controllers(...list: Controller[]): this {
    this.metrics.controllers(list);
    return this.step({
      start: () => list.forEach((c) => c.start()),
      stop: () => Promise.allSettled(list.map((c) => c.stop())),
    });
  }

  /**
   * Wake-up consumers, made by `wire` when their turn to start comes (their controllers run by
   * then); start waits until every one pulls. Counted in the registry under `label`.
   */
  wakeUps(label: string, wire: () => WakeUpConsumer[], o: { stopTimeoutMs?: number } = {}): this {
    let consumers: WakeUpConsumer[] = [];
    this.metrics.consumers(label, () => consumers);
    return this.step({
      start: async () => {
        consumers = wire();
        await Promise.all(consumers.map((c) => c.ready));
      },
      stop: () => Promise.allSettled(consumers.map((c) => c.stop(o.stopTimeoutMs === undefined ? undefined : { timeoutMs: o.stopTimeoutMs }))),
    });
  }

  /** Every key of the controllers is listed and queued once, at this point of the start. */
  resync(...list: Controller[]): this {
    return this.step({ start: () => Promise.all(list.map((c) => c.resync())) });
  }

  /** A gRPC service, served by listen({ grpcPort }). */
  grpc(definition: grpc.ServiceDefinition, handlers: grpc.UntypedServiceImplementation, o: { options?: grpc.ServerOptions; credentials?: grpc.ServerCredentials } = {}): this {
    this.grpcServer ??= new grpc.Server(o.options);
    if (o.credentials) this.grpcCredentials = o.credentials;
    this.grpcServer.addService(definition, handlers);
    return this;
  }

  /** Runs the declared steps in order. */
  async start(): Promise<void> {
    if (this.up) return;
    for (; this.begun < this.steps.length; ) await this.steps[this.begun++]!.start?.();
    this.up = true;
    this.log.info({ service: this.o.name }, `${this.o.name} started`);
  }

  /** Serves HTTP on host:port (0: any free port) and, with `grpcPort` (0: any), the gRPC services. */
  async listen(o: { host: string; port: number; grpcPort?: number }): Promise<Listening> {
    const url = await this.http.listen({ host: o.host, port: o.port });
    if (o.grpcPort === undefined || o.grpcPort < 0 || !this.grpcServer) return { url };
    return { url, grpcAddress: await this.listenGrpc(o.host, o.grpcPort) };
  }

  /** Serves the gRPC services alone on host:port (0: any free port); returns host:port. */
  async listenGrpc(host: string, port: number): Promise<string> {
    const server = this.grpcServer;
    if (!server) throw new Error(`${this.o.name} declares no gRPC service`);
    const bound = await new Promise<number>((resolve, reject) => server.bindAsync(`${host}:${port}`, this.grpcCredentials, (err, p) => (err ? reject(err) : resolve(p))));
    this.grpcBound = true;
    return `${host}:${bound}`;
  }

  /** Closes the servers, then stops what started in the reverse order (a step's failure is logged, the others go on). */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.up = false;
      // no new requests, the running ones answered, before what they use stops
      const server = this.grpcServer;
      if (server && this.grpcBound) await new Promise<void>((r) => server.tryShutdown(() => r()));
      await this.http.close();
      const stops = [...this.steps.slice(0, this.begun).reverse().map((s) => () => s.stop?.()), ...this.closers];
      for (const stop of stops) {
        await Promise.resolve()
          .then(stop)
          .catch((err: unknown) => this.log.warn({ err, service: this.o.name }, "stopping a part of the service failed"));
      }
    })();
    return this.stopping;
  }
}
