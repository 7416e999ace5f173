import { test } from "node:test";
import assert from "node:assert/strict";
import { ControllerMetrics, METRICS, METRIC_NAME, Metrics, checkMetricName } from "./metrics.js";

test("one registry serves every controller's metrics as Prometheus text", async () => {
  const metrics = new Metrics({ process: false });
  const m = new ControllerMetrics();
  const other = new ControllerMetrics();
  metrics.controllers([
    { snapshot: () => ({ name: "graceful-eviction", queueDepth: 2, inFlight: 1, backoffKeys: 1, terminalKeys: 3, metrics: m }) },
    { snapshot: () => ({ name: 'odd"name', queueDepth: 0, inFlight: 0, backoffKeys: 0, metrics: other }) },
  ]);
  m.observe("done", 3);
  m.observe("after", 40);
  m.observe("error", 2000, "timeout");
  m.observeWakeUpLag(120);
  m.timersFired = 7;
  m.terminalSkips = 4;
  const text = await metrics.text();
  const lines = text.split("\n");
  const has = (l: string) => assert.ok(lines.includes(l), `missing line: ${l}\n${text}`);
  has(`# TYPE ${METRICS.queueDepth} gauge`);
  has(`${METRICS.queueDepth}{controller="graceful-eviction"} 2`);
  has(`${METRICS.inFlight}{controller="graceful-eviction"} 1`);
  has(`# TYPE ${METRICS.reconcileTotal} counter`);
  has(`${METRICS.reconcileTotal}{controller="graceful-eviction",result="done"} 1`);
  has(`${METRICS.reconcileTotal}{controller="graceful-eviction",result="after"} 1`);
  has(`${METRICS.reconcileTotal}{controller="graceful-eviction",result="error"} 1`);
  has(`${METRICS.reconcileErrors}{controller="graceful-eviction",reason="timeout"} 1`);
  has(`# TYPE ${METRICS.reconcileDuration} histogram`);
  has(`${METRICS.reconcileDuration}_bucket{le="0.005",controller="graceful-eviction"} 1`);
  has(`${METRICS.reconcileDuration}_bucket{le="0.05",controller="graceful-eviction"} 2`);
  has(`${METRICS.reconcileDuration}_bucket{le="+Inf",controller="graceful-eviction"} 3`);
  has(`${METRICS.reconcileDuration}_count{controller="graceful-eviction"} 3`);
  has(`${METRICS.reconcileDuration}_sum{controller="graceful-eviction"} 2.043`);
  has(`# TYPE ${METRICS.wakeUpLag} histogram`);
  has(`${METRICS.wakeUpLag}_bucket{le="0.1",controller="graceful-eviction"} 0`);
  has(`${METRICS.wakeUpLag}_bucket{le="0.25",controller="graceful-eviction"} 1`);
  has(`${METRICS.timersFired}{controller="graceful-eviction"} 7`);
  has(`${METRICS.queueDepth}{controller="odd\\"name"} 0`);
  has(`# TYPE ${METRICS.terminalKeys} gauge`);
  has(`${METRICS.terminalKeys}{controller="graceful-eviction"} 3`);
  has(`${METRICS.terminalKeys}{controller="odd\\"name"} 0`);
  has(`${METRICS.reconcileErrors}{controller="graceful-eviction",reason="terminal"} 0`);
  has(`${METRICS.terminalSkips}{controller="graceful-eviction"} 4`);
  assert.equal(lines.filter((l) => l.startsWith(`# TYPE ${METRICS.reconcileTotal} `)).length, 1, "one TYPE line per family");

  // totals are read at each scrape, not added up twice
  m.observe("done", 1);
  const again = (await metrics.text()).split("\n");
  assert.ok(again.includes(`${METRICS.reconcileTotal}{controller="graceful-eviction",result="done"} 2`));

  // a start cut short: its controllers leave, the ones started again count alone
  metrics.forgetControllers();
  const fresh = new ControllerMetrics();
  metrics.controllers([{ snapshot: () => ({ name: "graceful-eviction", queueDepth: 0, inFlight: 0, backoffKeys: 0, metrics: fresh }) }]);
  fresh.observe("done", 1);
  m.observe("done", 1);
  const restarted = (await metrics.text()).split("\n");
  assert.ok(restarted.includes(`${METRICS.reconcileTotal}{controller="graceful-eviction",result="done"} 1`), restarted.join("\n"));
  assert.ok(restarted.includes(`${METRICS.reconcileDuration}_count{controller="graceful-eviction"} 5`), "the histogram keeps what it saw (4), plus the new one");
});

test("the relay, the consumers and the store's statements are in the same registry", async () => {
  const metrics = new Metrics({ process: false });
  const relay = { active: true, stats: { published: 5, duplicates: 1, batches: 2, errors: 0, pruned: 3 } };
  metrics.relay(relay);
  const consumers = [{ stats: { received: 4, wakeUps: 6, acked: 3, naked: 1, dropped: 0, inFlight: 2 } }];
  metrics.consumers("binding", () => consumers);
  const observe = metrics.statementObserver();
  observe("write", 0.003);
  observe("list", 0.2);
  const lines = (await metrics.text()).split("\n");
  const has = (l: string) => assert.ok(lines.includes(l), `missing line: ${l}`);
  has(`${METRICS.relayPublished} 5`);
  has(`${METRICS.relayDuplicates} 1`);
  has(`${METRICS.relayActive} 1`);
  has(`${METRICS.consumerMessages}{consumer="binding",outcome="acked"} 3`);
  has(`${METRICS.consumerMessages}{consumer="binding",outcome="naked"} 1`);
  has(`${METRICS.consumerWakeUps}{consumer="binding"} 6`);
  has(`${METRICS.consumerInFlight}{consumer="binding"} 2`);
  has(`${METRICS.storeStatementDuration}_count{statement="write"} 1`);
  has(`${METRICS.storeStatementDuration}_bucket{le="0.25",statement="list"} 1`);
  relay.active = false;
  assert.ok((await metrics.text()).split("\n").includes(`${METRICS.relayActive} 0`));
});

test("metric names follow flotilla_<area>_<what>_<unit>", async (t) => {
  const cases: [string, boolean][] = [
    ["flotilla_controller_queue_depth", true],
    ["flotilla_store_statement_duration_seconds", true],
    ["flotilla_queue", false],
    ["controller_queue_depth", false],
    ["flotilla_Controller_depth", false],
    ["flotilla_controller__depth", false],
  ];
  for (const [name, ok] of cases) {
    await t.test(`${name} is ${ok ? "taken" : "refused"}`, () => {
      if (ok) assert.equal(checkMetricName(name), name);
      else assert.throws(() => new Metrics({ process: false }).counter(name, "x"), /flotilla_<area>_<what>_<unit>/);
    });
  }
  for (const name of Object.values(METRICS)) assert.match(name, METRIC_NAME);
});

test("the process metrics are there unless left out", async () => {
  assert.match(await new Metrics().text(), /^process_cpu_seconds_total /m);
  assert.doesNotMatch(await new Metrics({ process: false }).text(), /process_cpu_seconds_total/);
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
