// Chaos (c): the stack's Postgres (one of the test's own) is restarted once at a random moment
// after member1 fails, with a fast shutdown (every session terminated), and once after member1
// returns, with an immediate one (a crash: recovery from the WAL at start), in the seed's failover
// walk-through (member1 fails, its replicas move to member2, member1 returns and its stale Works
// are removed). No service may exit; afterwards every invariant of invariants.ts must hold.
// CHAOS_SEED replays the moments. Needs the builds (npm run build) and the PostgreSQL binaries.
import { test } from "node:test";
import { PostgresServer, canRunPostgresServer } from "@flotilla/testkit";
import { backendOutages, seedFromEnv, startChaosStack, runChaos } from "./harness.js";

const DEPLOYMENTS = Number(process.env.CHAOS_DEPLOYMENTS ?? 12);

test(`Postgres restarts during the failover walk-through (${DEPLOYMENTS} Deployments): no service exits, every invariant holds`, { skip: !canRunPostgresServer() && "no PostgreSQL binaries" }, async (t) => {
  const seed = seedFromEnv();
  t.diagnostic(`CHAOS_SEED=${seed}`);
  const pg = await PostgresServer.start();
  t.after(() => pg.destroy());
  const s = await startChaosStack({ label: "CHAOSPG", deployments: DEPLOYMENTS, seed, pg });
  t.after(() => s.close());
  const modes = ["fast", "immediate"] as const;
  const chaos = backendOutages(s, { name: "postgres", outages: 2, afterReturn: 1, gapMs: [300, 3000], downMs: [500, 2500], stop: (i) => pg.stopServer(modes[i % 2]), start: () => pg.startServer() });
  await runChaos(t, s, seed, chaos);
});
