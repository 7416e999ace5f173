// The cost budget: what one Deployment costs from POST to ready (transactions, write
// transactions, row writes, statements, NATS messages, outbox rows and bytes), counted through
// the whole stack and held to budget.ts. Counts, not times: they do not depend on the machine's
// speed, only on how much of the work shares a batch.
import { test } from "node:test";
import assert from "node:assert/strict";
import { canRunPostgresServer } from "@flotilla/testkit";
import { BURST, SINGLE, type PhaseBudget } from "./budget.js";
import { MEASURES, measureCost, type Measure } from "./harness.js";

function overBudget(phase: string, got: Record<Measure, number>, budget: PhaseBudget): string[] {
  return MEASURES.filter((m) => got[m] > budget[m].max).map((m) => `${phase} ${m}: ${got[m].toFixed(2)} per Deployment, budget ${budget[m].max} (${budget[m].why})`);
}

test("one replica of each service: a Deployment costs no more than its budget, in a burst and one at a time", { timeout: 240_000, skip: !canRunPostgresServer() && "no PostgreSQL binaries" }, async (t) => {
  const r = await measureCost({ replicas: 1, clusters: 10, burst: 200, single: 10, log: (l) => t.diagnostic(l) });
  for (const phase of ["burst", "single"] as const) {
    const p = r.perDeployment[phase];
    t.diagnostic(`${phase}: ${MEASURES.map((m) => `${m} ${p[m].toFixed(2)}`).join(", ")}`);
  }
  assert.deepEqual(r.notReady, [], "every Deployment ready when counted");
  const over = [...overBudget("burst", r.perDeployment.burst, BURST), ...overBudget("single", r.perDeployment.single, SINGLE)];
  const detail = (phase: "burst" | "single") => `${phase}: row writes by table ${JSON.stringify(r.raw[phase].tables)}; statements ${r.raw[phase].topStatements.map(([q, n]) => `\n  ${n} × ${q}`).join("")}`;
  assert.deepEqual(over, [], `over budget:\n${over.join("\n")}\n${detail("burst")}\n${detail("single")}`);
});
