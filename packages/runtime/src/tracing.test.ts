import { test } from "node:test";
import assert from "node:assert/strict";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { traceFields } from "@flotilla/log";
import { contextFrom, inSpan, startTracing, traceContextOf } from "./tracing.js";

test("with tracing off a span records nothing and no trace context is handed on", async () => {
  const got = await inSpan("off", {}, async () => [traceContextOf(), traceFields()]);
  assert.deepEqual(got, [undefined, {}]);
});

test("with tracing on a span's context goes on as a traceparent, a reconcile from it joins the trace, and log fields carry its ids", async () => {
  const exporter = new InMemorySpanExporter();
  const tracing = startTracing({ service: "t", exporter });
  try {
    let carried: string | undefined;
    let fields: ReturnType<typeof traceFields> = {};
    await inSpan("request", {}, async () => {
      carried = traceContextOf();
      fields = traceFields();
    });
    assert.match(carried ?? "", /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    // later, elsewhere: a span whose parent is the carried context
    await assert.rejects(inSpan("reconcile", { parent: contextFrom(carried) }, async () => Promise.reject(new Error("boom"))), /boom/);
    const [request, reconcile] = exporter.getFinishedSpans();
    assert.equal(request!.name, "request");
    assert.equal(reconcile!.name, "reconcile");
    assert.equal(reconcile!.spanContext().traceId, request!.spanContext().traceId);
    assert.equal(reconcile!.parentSpanContext?.spanId, request!.spanContext().spanId);
    assert.equal(reconcile!.status.code, 2, "a throw marks the span as an error");
    assert.deepEqual(fields, { trace_id: request!.spanContext().traceId, span_id: request!.spanContext().spanId });
    assert.equal(traceContextOf(contextFrom(undefined)), undefined);
  } finally {
    await tracing.stop();
  }
  assert.equal(await inSpan("after stop", {}, async () => traceContextOf()), undefined);
});
