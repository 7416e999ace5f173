// Chaos soak: the chaos walk-throughs of test/e2e/chaos for longer and all at once. Each round
// starts a stack of its own (a new database and stream, on a Postgres and a nats-server of the
// script's own), places --deployments Deployments, fails member1 and then, at random moments,
// kills every service with SIGKILL (--kills rounds of all six), kills NATS and restarts Postgres
// (one outage each after the fault and one after member1's return); afterwards every invariant
// of test/e2e/chaos/invariants.ts must hold. Stops at the first round that breaks one and prints
// its seed (CHAOS_SEED replays a round of the e2e tests; --seed replays the soak).
//   npm run build
//   node --conditions=source --import tsx test/load/chaos/soak.ts [--rounds 5] [--deployments 30] [--kills 2] [--seed N] [--settle 120] [--pods 110]
// --pods sets the pods each simulated node holds: member2 must fit 3 replicas of every Deployment
// (300 Deployments need --pods 500).
import os from "node:os";
import { parseArgs } from "node:util";
import { NatsServer, PostgresServer, canRunNatsServer, canRunPostgresServer } from "@flotilla/testkit";
import { backendOutages, failoverWalkThrough, killEveryService, random, startChaosStack } from "../../e2e/chaos/harness.js";
import { snapshot } from "../../e2e/chaos/invariants.js";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    deployments: { type: "string", default: "30" },
    kills: { type: "string", default: "2" },
    seed: { type: "string" },
    settle: { type: "string", default: "120" },
    pods: { type: "string" },
  },
});
const ROUNDS = Number(values.rounds);
const N = Number(values.deployments);
const KILLS = Number(values.kills);
const SETTLE_MS = Number(values.settle) * 1000;
const PODS = values.pods !== undefined ? Number(values.pods) : Math.max(110, Math.ceil((N * 3 * 1.5) / 2));
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);

async function main(): Promise<number> {
  if (!canRunPostgresServer() || !canRunNatsServer()) {
    console.error("needs the PostgreSQL server binaries and nats-server");
    return 2;
  }
  console.log(`chaos soak: ${ROUNDS} rounds of ${N} Deployments (${PODS} pods per node), ${KILLS} kill(s) of every service, NATS and Postgres outages; seed ${seed}; ${os.cpus().length} cores`);
  const pg = await PostgresServer.start();
  const nats = await NatsServer.create();
  await nats.start();
  const seeds = random(seed);
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const roundSeed = Math.floor(seeds() * 2 ** 31);
      const s = await startChaosStack({ label: "SOAK", deployments: N, seed: roundSeed, pg, nats, podsPerNode: PODS });
      try {
        const services = killEveryService(s, { gapMs: [200, 2500], downMs: [0, 1000], rounds: KILLS });
        const natsOutages = backendOutages(s, { name: "nats-server (kill -9)", outages: 2, afterReturn: 1, gapMs: [300, 5000], downMs: [500, 2500], stop: () => nats.kill("SIGKILL"), start: () => nats.start() });
        const pgOutages = backendOutages(s, { name: "postgres", outages: 2, afterReturn: 1, gapMs: [300, 5000], downMs: [500, 2500], stop: (i) => pg.stopServer(i % 2 ? "immediate" : "fast"), start: () => pg.startServer() });
        const times = await failoverWalkThrough(s, async (w) => void (await Promise.all([services(), natsOutages(w), pgOutages(w)])), { settleMs: SETTLE_MS, evictMs: SETTLE_MS });
        console.log(`round ${round} (seed ${roundSeed}): ok; evicted ${times.evictedMs} ms after the fault, settled ${times.settledMs} ms after member1 returned and ${times.afterChaosMs} ms after the last outage ended; kills ${JSON.stringify(s.ledger.kills())}`);
      } catch (e) {
        console.error(`round ${round} (seed ${roundSeed}) failed: ${(e as Error).message}\n${s.timeline.join("\n")}\n${s.logs.tail(20_000)}\n${await snapshot(s.world).catch((x) => String(x))}`);
        return 1;
      } finally {
        await s.close();
      }
    }
    console.log(`all ${ROUNDS} rounds held every invariant`);
    return 0;
  } finally {
    await nats.destroy();
    await pg.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
