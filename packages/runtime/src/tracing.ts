import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace, type Context, type Link, type Span } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";

/**
 * OpenTelemetry traces. Off by default: no provider is registered, so every span below is the
 * API's non-recording one and no trace context is written anywhere. `startTracing` turns them on
 * (runService does when OTEL_EXPORTER_OTLP_ENDPOINT is set; a test passes an in-memory exporter).
 *
 * A trace goes from the gateway's request span through the object store, which keeps the
 * caller's context (W3C traceparent) on the write's outbox row; the relay puts it on the wake-up
 * (`traceContext`), and the controller runtime starts the reconcile it wakes as a child of it, so
 * the writes of that reconcile carry the trace on to the next service, down to the member apply.
 */
export const TRACER = "flotilla";

export const tracer = () => trace.getTracer(TRACER);

export interface Tracing {
  /** Sends what is buffered, then stops. */
  stop(): Promise<void>;
}

/**
 * Registers the process's tracer provider (with the async-hooks context manager and the W3C
 * propagator): OTLP over HTTP to `endpoint` (its `/v1/traces`), or `exporter` as it is (tests).
 */
export function startTracing(o: { service: string; endpoint?: string; exporter?: SpanExporter }): Tracing {
  const processor = o.exporter
    ? new SimpleSpanProcessor(o.exporter)
    : new BatchSpanProcessor(new OTLPTraceExporter({ url: `${(o.endpoint ?? "").replace(/\/+$/, "")}/v1/traces` }));
  const provider = new NodeTracerProvider({ spanProcessors: [processor], resource: resourceFromAttributes({ "service.name": o.service }) });
  provider.register();
  return {
    async stop() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** The W3C traceparent of `ctx` (default: the active context), or undefined when it has no recording span. */
export function traceContextOf(ctx: Context = context.active()): string | undefined {
  const span = trace.getSpan(ctx);
  if (!span || !span.isRecording()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier.traceparent;
}

/** The context a traceparent names (a remote parent), or the root context without one. */
export function contextFrom(traceparent: string | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}

/**
 * Runs `fn` in a new span (a child of `parent`, default the active context; `links` to other
 * traces that led here), ending it when `fn` settles; a throw marks it as an error.
 */
export async function inSpan<T>(
  name: string,
  o: { parent?: Context; links?: Link[]; kind?: SpanKind; attributes?: Record<string, string | number | boolean> },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = o.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: o.kind ?? SpanKind.INTERNAL, links: o.links, attributes: o.attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (e) {
    span.recordException(e as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error)?.message });
    throw e;
  } finally {
    span.end();
  }
}

export { SpanKind };
