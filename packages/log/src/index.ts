import { trace } from "@opentelemetry/api";
import { pino, type Logger } from "pino";

export type { Logger } from "pino";

/** The one root logger of a process; children are made with `log.child({ controller })`. */
export function createLogger(opts: { name: string; level?: string }): Logger {
  return pino({
    name: opts.name,
    level: opts.level ?? "info",
    base: { service: opts.name },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: traceFields,
  });
}

/** `trace_id` and `span_id` of the active span, on every line logged inside one (tracing on; see @flotilla/runtime). */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span || !span.isRecording()) return {};
  const c = span.spanContext();
  return { trace_id: c.traceId, span_id: c.spanId };
}

/** A logger that drops everything (tests). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
