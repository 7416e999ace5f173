// Chaos (a): every service is killed with SIGKILL once, in a random order at random moments of
// the seed's failover walk-through (member1 fails, its replicas move to member2, member1 returns
// and its stale Works are removed), and started again after a random pause. Afterwards every
// invariant of invariants.ts must hold. CHAOS_SEED replays an order of events.
// Needs the builds (npm run build).
import { test } from "node:test";
import { snapshot } from "./invariants.js";
import { failoverWalkThrough, killEveryService, seedFromEnv, startChaosStack } from "./harness.js";

const DEPLOYMENTS = Number(process.env.CHAOS_DEPLOYMENTS ?? 12);

test(`kill -9 of each service at a random moment of the failover walk-through (${DEPLOYMENTS} Deployments): every invariant holds`, async (t) => {
  const seed = seedFromEnv();
  t.diagnostic(`CHAOS_SEED=${seed}`);
  const s = await startChaosStack({ label: "CHAOSSVC", deployments: DEPLOYMENTS, seed });
  t.after(() => s.close());
  try {
    const times = await failoverWalkThrough(s, killEveryService(s, { gapMs: [200, 2500], downMs: [0, 1000] }));
    for (const line of s.timeline) t.diagnostic(line);
    t.diagnostic(`kills ${JSON.stringify(s.ledger.kills())}; evicted ${times.evictedMs} ms after the fault, settled ${times.settledMs} ms after member1 returned`);
  } catch (e) {
    console.error(`CHAOS_SEED=${seed}\n${s.timeline.join("\n")}\n${s.logs.tail(30_000)}\n${await snapshot(s.world).catch((x) => String(x))}`);
    throw e;
  }
});
