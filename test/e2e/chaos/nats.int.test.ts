// Chaos (b): the stack's nats-server (one of the test's own) is killed with SIGKILL and started
// again on its store, once at a random moment after member1 fails and once after it returns, in
// the seed's failover walk-through (member1 fails, its replicas move to member2, member1 returns
// and its stale Works are removed). No service may exit; afterwards every invariant of
// invariants.ts must hold. CHAOS_SEED replays the moments. Needs the builds (npm run build) and
// nats-server.
import { test } from "node:test";
import { NatsServer, canRunNatsServer } from "@flotilla/testkit";
import { backendOutages, seedFromEnv, startChaosStack, runChaos } from "./harness.js";

const DEPLOYMENTS = Number(process.env.CHAOS_DEPLOYMENTS ?? 12);

test(`kill -9 of NATS during the failover walk-through (${DEPLOYMENTS} Deployments): no service exits, every invariant holds`, { skip: !canRunNatsServer() && "no nats-server binary" }, async (t) => {
  const seed = seedFromEnv();
  t.diagnostic(`CHAOS_SEED=${seed}`);
  const nats = await NatsServer.create();
  await nats.start();
  t.after(() => nats.destroy());
  const s = await startChaosStack({ label: "CHAOSNATS", deployments: DEPLOYMENTS, seed, nats });
  t.after(() => s.close());
  const chaos = backendOutages(s, { name: "nats-server (kill -9)", outages: 2, afterReturn: 1, gapMs: [300, 3000], downMs: [500, 2500], stop: () => nats.kill("SIGKILL"), start: () => nats.start() });
  await runChaos(t, s, seed, chaos);
});
