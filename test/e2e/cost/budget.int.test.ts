// The cost budget: what one Deployment costs from POST to ready (transactions, write
// transactions, row writes, statements, NATS messages, outbox rows and bytes), counted through
// the whole stack and held to budget.ts. Counts, not times: they do not depend on the machine's
// speed, only on how much of the work shares a batch.
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { canRunPostgresServer } from "@flotilla/testkit";
import { ONE_REPLICA, THREE_REPLICAS, type StackBudget } from "./budget.js";
import { MEASURES, measureCost } from "./harness.js";

async function withinBudget(t: TestContext, replicas: number, budget: StackBudget): Promise<void> {
  const r = await measureCost({ replicas, clusters: 10, burst: 200, single: 10, log: (l) => t.diagnostic(l) });
  const over: string[] = [];
  for (const phase of ["burst", "single"] as const) {
    const got = r.perDeployment[phase];
    t.diagnostic(`${phase}: ${MEASURES.map((m) => `${m} ${got[m].toFixed(2)}`).join(", ")}`);
    for (const m of MEASURES) if (got[m] > budget[phase][m].max) over.push(`${phase} ${m}: ${got[m].toFixed(2)} per Deployment, budget ${budget[phase][m].max} (${budget[phase][m].why})`);
  }
  const detail = (phase: "burst" | "single") => `${phase}: row writes by table ${JSON.stringify(r.raw[phase].tables)}; object writes ${JSON.stringify(r.raw[phase].writes)}; statements ${r.raw[phase].topStatements.map(([q, n]) => `\n  ${n} × ${q}`).join("")}\nexecution time ${r.raw[phase].topStatementTimes.map(([q, ms]) => `\n  ${ms} ms: ${q}`).join("")}`;
  for (const phase of ["burst", "single"] as const) for (const l of detail(phase).split("\n")) t.diagnostic(l);
  t.diagnostic(`the writes of the last Deployment one at a time:`);
  for (const l of r.story) t.diagnostic(`  ${l}`);
  assert.deepEqual(r.notReady, [], "every Deployment ready when counted");
  assert.deepEqual(over, [], `over budget:\n${over.join("\n")}\n${detail("burst")}\n${detail("single")}`);
}

const skip = !canRunPostgresServer() && "no PostgreSQL binaries";

test("one replica of each service: a Deployment costs no more than its budget, in a burst and one at a time", { timeout: 240_000, skip }, (t) => withinBudget(t, 1, ONE_REPLICA));

test("three replicas of each service: a Deployment costs no more than its budget, in a burst and one at a time", { timeout: 300_000, skip }, (t) => withinBudget(t, 3, THREE_REPLICAS));
