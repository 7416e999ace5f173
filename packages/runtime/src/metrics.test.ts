import { test } from "node:test";
import assert from "node:assert/strict";
import { ControllerMetrics, METRICS, renderMetrics } from "./metrics.js";

test("renderMetrics writes Prometheus text for every controller", () => {
  const m = new ControllerMetrics();
  m.observe("done", 3);
  m.observe("after", 40);
  m.observe("error", 2000, "timeout");
  m.timersFired = 7;
  m.terminalSkips = 4;
  const other = new ControllerMetrics();
  const text = renderMetrics([
    { snapshot: () => ({ name: "graceful-eviction", queueDepth: 2, inFlight: 1, backoffKeys: 1, terminalKeys: 3, metrics: m }) },
    { snapshot: () => ({ name: 'odd"name', queueDepth: 0, inFlight: 0, backoffKeys: 0, metrics: other }) },
  ]);
  const lines = text.split("\n");
  const has = (l: string) => assert.ok(lines.includes(l), `missing line: ${l}\n${text}`);
  has(`# TYPE ${METRICS.queueDepth} gauge`);
  has(`${METRICS.queueDepth}{controller="graceful-eviction"} 2`);
  has(`${METRICS.inFlight}{controller="graceful-eviction"} 1`);
  has(`${METRICS.reconcileTotal}{controller="graceful-eviction",result="done"} 1`);
  has(`${METRICS.reconcileTotal}{controller="graceful-eviction",result="after"} 1`);
  has(`${METRICS.reconcileTotal}{controller="graceful-eviction",result="error"} 1`);
  has(`${METRICS.reconcileErrors}{controller="graceful-eviction",reason="timeout"} 1`);
  has(`# TYPE ${METRICS.reconcileDuration} histogram`);
  has(`${METRICS.reconcileDuration}_bucket{controller="graceful-eviction",le="0.005"} 1`);
  has(`${METRICS.reconcileDuration}_bucket{controller="graceful-eviction",le="0.05"} 2`);
  has(`${METRICS.reconcileDuration}_bucket{controller="graceful-eviction",le="+Inf"} 3`);
  has(`${METRICS.reconcileDuration}_count{controller="graceful-eviction"} 3`);
  has(`${METRICS.reconcileDuration}_sum{controller="graceful-eviction"} 2.043`);
  has(`${METRICS.timersFired}{controller="graceful-eviction"} 7`);
  has(`${METRICS.queueDepth}{controller="odd\\"name"} 0`);
  has(`# TYPE ${METRICS.terminalKeys} gauge`);
  has(`${METRICS.terminalKeys}{controller="graceful-eviction"} 3`);
  has(`${METRICS.terminalKeys}{controller="odd\\"name"} 0`);
  has(`${METRICS.reconcileErrors}{controller="graceful-eviction",reason="terminal"} 0`);
  has(`${METRICS.terminalSkips}{controller="graceful-eviction"} 4`);
  assert.equal(lines.filter((l) => l.startsWith(`# TYPE ${METRICS.reconcileTotal} `)).length, 1, "one TYPE line per family");
  assert.ok(text.endsWith("\n"));
});

test("percentiles come from the recent reconciles", async (t) => {
  const cases: [string, number[], Record<string, number>][] = [
    ["no reconciles report zero", [], { p50: 0, p90: 0, p99: 0 }],
    ["one reconcile is every percentile", [7], { p50: 7, p90: 7, p99: 7 }],
    ["a hundred reconciles of 1..100 ms", Array.from({ length: 100 }, (_, i) => i + 1), { p50: 50, p90: 90, p99: 99 }],
  ];
  for (const [name, samples, want] of cases) {
    await t.test(name, () => {
      const m = new ControllerMetrics();
      for (const s of samples) m.observe("done", s);
      assert.deepEqual(m.percentiles(), want);
    });
  }
});
