// member3 switched to Pull mode on a running failover stack (../failover/harness.ts): a
// flotilla-agent in this process beside the simulator's member3, with the fast test settings,
// talking to the stack's gateway with its administrator token. Resolves once member3 is Pull and Ready.
import { buildAgent } from "@flotilla/agent";
import { createLogger } from "@flotilla/log";
import { eventually } from "@flotilla/testkit";
import { FAST_AGENT } from "./settings.js";
import { CLUSTER, ready, type Stack } from "../failover/harness.js";

export interface PullAgent {
  /** Stops the agent; later calls do nothing. */
  stop(): Promise<void>;
}

export async function startPullAgent(s: Stack): Promise<PullAgent> {
  const m3 = s.sim.cluster("member3");
  const agent = buildAgent({
    settings: { ...FAST_AGENT, GATEWAY_URL: s.gw },
    log: createLogger({ name: "agent", level: process.env.E2E_LOG_LEVEL ?? "silent" }),
    member: { server: m3.url, token: m3.token },
    token: () => s.token,
  });
  let running = true;
  const stop = async () => {
    if (!running) return;
    running = false;
    await agent.stop();
  };
  try {
    await agent.start();
    await eventually(async () => {
      const c = await s.get(CLUSTER("member3"));
      return c?.spec?.syncMode === "Pull" && ready(c) === "True";
    }, { timeoutMs: 15_000, message: "member3 in Pull mode and Ready" });
  } catch (e) {
    await stop();
    throw e;
  }
  return { stop };
}
