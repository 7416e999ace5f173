// Chaos (a): every service is killed with SIGKILL once, in a random order at random moments of
// the seed's failover walk-through (member1 fails, its replicas move to member2, member1 returns
// and its stale Works are removed), and started again after a random pause. Afterwards every
// invariant of invariants.ts must hold. CHAOS_SEED replays an order of events.
// Needs the builds (npm run build).
import { test } from "node:test";
import { killEveryService, seedFromEnv, startChaosStack, runChaos } from "./harness.js";

const DEPLOYMENTS = Number(process.env.CHAOS_DEPLOYMENTS ?? 12);

test(`kill -9 of each service at a random moment of the failover walk-through (${DEPLOYMENTS} Deployments): every invariant holds`, async (t) => {
  const seed = seedFromEnv();
  t.diagnostic(`CHAOS_SEED=${seed}`);
  const s = await startChaosStack({ label: "CHAOSSVC", deployments: DEPLOYMENTS, seed });
  t.after(() => s.close());
  await runChaos(t, s, seed, killEveryService(s, { gapMs: [200, 2500], downMs: [0, 1000] }));
  t.diagnostic(`kills ${JSON.stringify(s.ledger.kills())}`);
});
