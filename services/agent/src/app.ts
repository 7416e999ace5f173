import { MemberClient, type MemberEndpoint } from "@flotilla/kube";
import { TunnelClient } from "@flotilla/tunnel";
import type { Logger } from "@flotilla/log";
import { ReadyThresholds } from "@flotilla/member-apply";
import { Metrics, ServiceHost, sleep } from "@flotilla/runtime";
import { GatewayClient } from "./gateway-client.js";
import { Heartbeat } from "./controllers/heartbeat.js";
import { WorkSync } from "./controllers/works.js";
import { renewIntervalMs } from "./logic/lease.js";
import type { Config } from "./config.js";

/**
 * The settings buildAgent uses: config.ts's, but for the files, endpoints and listener main.ts
 * turns into its dependencies; PROXY_TUNNEL may be left out (default true).
 */
export type AgentSettings = Omit<Config, "GATEWAY_TOKEN_FILE" | "GATEWAY_CA_FILE" | "GATEWAY_INSECURE_SKIP_TLS_VERIFY" | "MEMBER_KUBECONFIG" | "MEMBER_API_SERVER" | "MEMBER_TOKEN_FILE" | "MEMBER_CA_FILE" | "HOST" | "PORT" | "LOG_LEVEL" | "PROXY_TUNNEL"> & {
  PROXY_TUNNEL?: boolean;
};

export interface AgentDeps {
  settings: AgentSettings;
  log: Logger;
  member: MemberEndpoint;
  /** The gateway's token (read again for every request). */
  token: () => string;
  gatewayCa?: string;
  gatewayInsecureSkipTLSVerify?: boolean;
  now?: () => Date;
  /** The process's metrics registry (default: one of its own). */
  metrics?: Metrics;
}

/** The agent's metric names. */
export const AGENT_METRICS = {
  registered: "flotilla_agent_registered",
  leaseRenewals: "flotilla_agent_lease_renewals_total",
  statusReports: "flotilla_agent_status_reports_total",
} as const;

export interface Agent {
  readonly metrics: Metrics;
  readonly heartbeat: Heartbeat;
  readonly works: WorkSync;
  /** The cluster proxy's tunnel to the gateway (undefined with PROXY_TUNNEL=false). */
  readonly tunnel?: TunnelClient;
  /** Registers the Cluster (retrying until the gateway answers), then starts the lease, status and Works loops. */
  start(o?: { host?: string; port?: number }): Promise<{ url?: string }>;
  stop(): Promise<void>;
  /** Whether the Cluster is registered and the last lease renewal succeeded. */
  ready(): boolean;
}

/** flotilla-agent: one member in Pull mode, connected to the control plane only through the gateway. */
export function buildAgent(deps: AgentDeps): Agent {
  const s = deps.settings;
  const log = deps.log;
  const cluster = s.CLUSTER_NAME;
  const gateway = new GatewayClient({ url: s.GATEWAY_URL, token: deps.token, ca: deps.gatewayCa, insecureSkipTLSVerify: deps.gatewayInsecureSkipTLSVerify, timeoutMs: s.GATEWAY_REQUEST_TIMEOUT });
  const member = new MemberClient({ ...deps.member, name: cluster, timeoutMs: s.MEMBER_REQUEST_TIMEOUT, fieldManager: "flotilla-agent" });
  const leaseSeconds = Math.max(1, Math.round(s.CLUSTER_LEASE_DURATION / 1000));
  const heartbeat = new Heartbeat({
    gateway,
    member,
    cluster,
    log,
    thresholds: new ReadyThresholds({ successThresholdMs: s.CLUSTER_SUCCESS_THRESHOLD, failureThresholdMs: s.CLUSTER_FAILURE_THRESHOLD }),
    leaseDurationSeconds: leaseSeconds,
    probeTimeoutMs: s.CLUSTER_PROBE_TIMEOUT,
    discoveryRefreshMs: s.CLUSTER_DISCOVERY_REFRESH,
    now: deps.now,
  });
  const works = new WorkSync({
    gateway,
    member,
    cluster,
    log: log.child({ controller: "works" }),
    concurrency: s.WORK_CONCURRENCY,
    retryMs: s.WORK_RETRY_INTERVAL,
    resyncMs: s.WORK_RESYNC_PERIOD,
    watchTimeoutSeconds: Math.max(1, Math.round(s.GATEWAY_WATCH_TIMEOUT / 1000)),
    memberWatchTimeoutSeconds: Math.max(1, Math.round(s.MEMBER_WATCH_TIMEOUT / 1000)),
    now: deps.now,
  });
  const tunnel =
    s.PROXY_TUNNEL === false
      ? undefined
      : new TunnelClient({
          url: s.GATEWAY_URL,
          cluster,
          token: deps.token,
          ca: deps.gatewayCa,
          insecureSkipTLSVerify: deps.gatewayInsecureSkipTLSVerify,
          // the gateway already checked the caller (RBAC clusters/proxy) and set Impersonate-*; the member's credentials are the agent's
          forward: (o) => member.forward(o),
          log: log.child({ controller: "tunnel" }),
        });
  const ac = new AbortController();
  const loops: Promise<void>[] = [];
  let registered = false;
  let leaseOk = false;
  const metrics = deps.metrics ?? new Metrics();
  metrics.gauge(AGENT_METRICS.registered, "1 once the Cluster is registered with the control plane.", [], function () {
    this.set(registered ? 1 : 0);
  });
  const renewals = metrics.counter(AGENT_METRICS.leaseRenewals, "Cluster lease renewals by outcome (ok, failed).", ["outcome"]);
  const reports = metrics.counter(AGENT_METRICS.statusReports, "Cluster status reports by outcome (ok, failed).", ["outcome"]);


  /** Runs `fn` every `everyMs` (measured from the start of each run) until stopped; failures are logged and retried next period. */
  const every = (what: string, everyMs: number, fn: () => Promise<unknown>, onResult?: (ok: boolean) => void) =>
    (async () => {
      while (!ac.signal.aborted) {
        const started = Date.now();
        try {
          await fn();
          onResult?.(true);
        } catch (err) {
          onResult?.(false);
          if (!ac.signal.aborted) log.warn({ err, cluster }, `${what} failed; retrying`);
        }
        await sleep(Math.max(1, everyMs - (Date.now() - started)), ac.signal);
      }
    })();

  const host = new ServiceHost({ name: "agent", log, metrics, ready: async () => leaseOk })
    .closing(() => {
      member.close();
      gateway.close();
    })
    .step({
      start: async () => {
        for (let failures = 1; !ac.signal.aborted && !registered; failures++) {
          try {
            await heartbeat.register();
            registered = true;
          } catch (err) {
            log.warn({ err, cluster, failures }, "registering the cluster failed; retrying");
            await sleep(Math.min(30_000, 500 * 2 ** Math.min(failures, 6)), ac.signal);
          }
        }
      },
    })
    .step({
      start: () => {
        const renewed = (ok: boolean) => {
          leaseOk = ok;
          renewals.inc({ outcome: ok ? "ok" : "failed" });
        };
        loops.push(every("renewing the cluster lease", renewIntervalMs(leaseSeconds, s.CLUSTER_LEASE_RENEW_INTERVAL_FRACTION), () => heartbeat.renewLease(), renewed));
        loops.push(every("reporting the cluster status", s.CLUSTER_STATUS_UPDATE_FREQUENCY, () => heartbeat.report(ac.signal), (ok) => reports.inc({ outcome: ok ? "ok" : "failed" })));
        works.start();
        tunnel?.start();
        log.info({ cluster, gateway: s.GATEWAY_URL, member: deps.member.server }, "agent started");
      },
      stop: async () => {
        tunnel?.stop();
        await works.stop();
        await Promise.allSettled(loops);
      },
    });

  return {
    heartbeat,
    works,
    tunnel,
    metrics,
    ready: () => registered && leaseOk,
    async start(o = {}) {
      // /healthz answers (and /readyz says not ready) while the Cluster registers
      const url = o.port !== undefined && o.port >= 0 ? (await host.listen({ host: o.host ?? "127.0.0.1", port: o.port })).url : undefined;
      await host.start();
      return { url };
    },
    stop() {
      ac.abort();
      return host.stop();
    },
  };
}
