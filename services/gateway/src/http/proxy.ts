import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { WebSocketServer } from "ws";
import { BadRequestError, type Cluster, type EndpointPolicy, ForbiddenError, GK, KARMADA, type KubeObject, memberEndpoint, NotFoundError, UnavailableError } from "@flotilla/api";
import { MemberClientCache } from "@flotilla/kube";
import type { ObjectStore } from "@flotilla/store";
import { MAX_FRAME_BYTES, TunnelHub, TunnelRequestError, identityMayTunnel, tunnelCluster } from "@flotilla/tunnel";
import { SUPERUSER_GROUP, type Attributes, type UserInfo } from "../logic/rbac.js";
import { CLUSTER_PROXY_PREFIX, noTunnelMessage, proxyTarget, requestHeaders, responseHeaders, unreachableReason } from "../logic/proxy.js";
import { toHttpError } from "../logic/status.js";
import type { Gatekeeper } from "./auth.js";
import { openStreams } from "./open-streams.js";

export interface ClusterProxySettings extends EndpointPolicy {
  /** How long to wait for a member to start answering (a watch then streams without limit). */
  timeoutMs: number;
  /**
   * How often an open agent tunnel is admitted again (its token, RBAC, the cluster still in
   * Pull mode): a revoked token or a removed permission closes the tunnel within this time
   * (default 30 s).
   */
  tunnelRecheckMs?: number;
}

/** The WebSocket close code of a tunnel whose agent is no longer admitted (4000–4999: the application's own). */
export const TUNNEL_REFUSED = 4403;

export interface ClusterProxy {
  /** The Pull members' agent tunnels held by this replica. */
  readonly tunnels: TunnelHub;
  close(): void;
}

/**
 * `/apis/cluster.karmada.io/v1alpha1/clusters/{name}/proxy/{path}`: the request goes to the
 * member's apiEndpoint with the cluster's credentials (the Secret of spec.impersonatorSecretRef,
 * else of spec.secretRef, under the same endpoint rules as the execution service), as the caller
 * (Impersonate-User/Group). RBAC already asked for `clusters/proxy` (the verb of the method) before
 * this runs. Status, headers (end-to-end ones) and body come back as the member sends them,
 * streamed: a watch or a followed log is held open until either side closes it.
 *
 * A Pull member is reached through its agent's tunnel (`clusters/{name}/tunnel`, a WebSocket the
 * agent opens to this gateway; see @flotilla/tunnel): the same request, with the same headers,
 * goes over it, and the agent sends it to its member with its own member credentials. Only the
 * replica that holds the tunnel can carry it; any other answers 503 saying so.
 */
export function registerClusterProxy(app: FastifyInstance, d: { store: ObjectStore; gate: Gatekeeper; settings: ClusterProxySettings }): ClusterProxy {
  const clients = new MemberClientCache({ defaults: { timeoutMs: d.settings.timeoutMs } });
  const streams = openStreams(app);
  const tunnels = new TunnelHub();
  // a stopping gateway closes the agents' tunnels (they reconnect, to another replica or to this one when it is back)
  app.addHook("preClose", (done) => {
    tunnels.closeAll();
    done();
  });

  /** How to reach the cluster (undefined: a Pull cluster, through its agent's tunnel), or the Status why the proxy cannot. */
  async function endpointOf(name: string) {
    const cluster = await d.store.get<Cluster>({ gk: GK.cluster, name });
    if (!cluster) throw new NotFoundError({ group: KARMADA.cluster.group, kind: "clusters", name });
    const spec = cluster.spec ?? {};
    if (spec.syncMode === "Pull") {
      if (!tunnels.has(name)) throw new UnavailableError(noTunnelMessage(name));
      return undefined;
    }
    // upstream proxies with the impersonator's token; a join that wrote none leaves the cluster's own
    const ref = spec.impersonatorSecretRef?.name ? spec.impersonatorSecretRef : spec.secretRef;
    const as: Cluster = { ...cluster, spec: { ...spec, ...(ref ? { secretRef: ref } : {}) } };
    const secret = ref?.name ? await d.store.get<KubeObject>({ gk: GK.secret, namespace: ref.namespace ?? "", name: ref.name }) : undefined;
    // an unowned Secret serves only its holder among the Clusters naming it
    const unowned = secret && !(secret.metadata.ownerReferences ?? []).some((o) => o.kind === "Cluster");
    const others = unowned ? (await d.store.list<Cluster>(GK.cluster)).items : [];
    const e = memberEndpoint(as, secret, others, d.settings);
    if (!e.ok) throw new UnavailableError(`cluster ${name} cannot be reached through the proxy: ${e.reason}`);
    if (e.endpoint.proxyURL) throw new UnavailableError(`cluster ${name} cannot be reached through the proxy: spec.proxyURL is not supported by the cluster proxy`);
    return e.endpoint;
  }

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const t = proxyTarget(req.url);
    const user = req.user!;
    const endpoint = await endpointOf(t.cluster);
    // a proxied watch holds a watch slot like a watch of the gateway's own objects
    if (t.streaming) reply.raw.once("close", d.gate.watch(user, user.groups.includes(SUPERUSER_GROUP)));
    const ac = new AbortController();
    // the caller went away before the member answered (the request stream closes once its body is read: watch the response)
    reply.raw.once("close", () => ac.abort());
    // a gateway that stops cuts its proxied watches and logs (the member's side goes with them)
    if (t.streaming) reply.raw.once("close", streams.add(() => reply.raw.destroy()));
    const hasBody = req.headers["content-length"] !== undefined ? req.headers["content-length"] !== "0" : req.headers["transfer-encoding"] !== undefined;
    const o = { method: req.method, path: t.path, headers: requestHeaders(req.headers, user), body: hasBody ? req.raw : undefined, signal: ac.signal };
    let res: { statusCode?: number; headers: IncomingMessage["headers"]; body: NodeJS.ReadableStream };
    try {
      if (endpoint) {
        const m = await clients.get(t.cluster, endpoint).forward(o);
        res = { statusCode: m.statusCode, headers: m.headers, body: m };
      } else {
        res = await tunnels.forward(t.cluster, { ...o, timeoutMs: d.settings.timeoutMs });
      }
    } catch (e) {
      // a tunnel's failure says why in `errorCode` (its `code` is the gRPC one, as every FlotillaError's)
      const why = e instanceof TunnelRequestError ? { code: e.errorCode } : (e as { code?: string });
      if (!endpoint && why.code === "TunnelClosed") throw new UnavailableError(noTunnelMessage(t.cluster), { cause: e });
      throw new UnavailableError(`cluster ${t.cluster} did not answer through the proxy${endpoint ? "" : " (through its agent)"}: ${unreachableReason(why)}`, { cause: e });
    }
    // fastify pipes the body as it comes and destroys it (closing the member's stream) when the caller goes
    return reply
      .code(res.statusCode ?? 502)
      .headers(responseHeaders(res.headers))
      .send(res.body);
  };

  // bodies pass through unread, whatever their media type
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_req, payload, done) => done(null, payload));
    const methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
    scope.route({ method: methods, url: `${CLUSTER_PROXY_PREFIX}:name/proxy`, handler });
    scope.route({ method: methods, url: `${CLUSTER_PROXY_PREFIX}:name/proxy/*`, handler });
  });

  // the agents' tunnels: a WebSocket upgrade of clusters/{name}/tunnel, authenticated and authorized like any request
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES + 16 });
  const refuse = (socket: Duplex, err: unknown) => {
    const m = toHttpError(err);
    const body = JSON.stringify(m.body);
    if (socket.writable) socket.write(`HTTP/1.1 ${m.code} ${m.code >= 500 ? "Service Unavailable" : "Refused"}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    socket.destroy();
  };
  app.server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    const url = req.url ?? "/";
    const cluster = tunnelCluster(url);
    if (!cluster || req.method !== "GET") {
      // authenticated first, as every request: an anonymous caller gets its 401, not the 400
      const notUpgraded = new BadRequestError(`the server does not upgrade ${req.method} ${url.split("?")[0]!.slice(0, 200)}: only an agent's clusters/{name}/tunnel is a WebSocket (kubectl exec, attach and port-forward are not proxied)`);
      d.gate.authenticate({ authorization: req.headers.authorization, client: req.socket.remoteAddress, record: {} }).then(
        () => refuse(socket, notUpgraded),
        (e: unknown) => refuse(socket, e),
      );
      return;
    }
    const attrs: Attributes = { resourceRequest: true, verb: "create", apiGroup: KARMADA.cluster.group, resource: "clusters", subresource: "tunnel", namespace: "", name: cluster };
    const record: { user?: UserInfo; reason?: string } = {};
    const receivedAt = new Date();
    let code = 101;
    /** The agent may hold the tunnel: its token, RBAC (create clusters/tunnel), its own cluster, which exists in Pull mode. */
    const admitted = async (r: { user?: UserInfo; reason?: string }) => {
      const { user } = await d.gate.admit({ authorization: req.headers.authorization, client: req.socket.remoteAddress, attrs, record: r });
      if (!identityMayTunnel(user.name, cluster)) throw new ForbiddenError(`User ${JSON.stringify(user.name)} is the agent of another cluster: it cannot open the tunnel of cluster ${JSON.stringify(cluster)}`, { group: KARMADA.cluster.group, kind: "clusters", name: cluster });
      const c = await d.store.get<Cluster>({ gk: GK.cluster, name: cluster });
      if (!c) throw new NotFoundError({ group: KARMADA.cluster.group, kind: "clusters", name: cluster });
      if (c.spec?.syncMode !== "Pull") throw new BadRequestError(`cluster ${cluster} is in Push mode: the control plane reaches it directly, and only a Pull cluster's agent opens a tunnel`);
      return user;
    };
    void (async () => {
      try {
        const user = await admitted(record);
        if (socket.destroyed) return;
        wss.handleUpgrade(req, socket, head, (ws) => {
          tunnels.attach(cluster, user.name, ws);
          app.log.info({ cluster, user: user.name }, "agent tunnel open");
          // admitted again now and then: a refusal (revoked token, permission gone, cluster gone or
          // now Push) closes the tunnel; a failure to decide (Postgres away, rate limit) keeps it
          const recheck = setInterval(() => {
            admitted({}).catch((e: unknown) => {
              const refused = toHttpError(e);
              if (refused.code >= 500 || refused.code === 429) return;
              app.log.warn({ cluster, user: user.name, code: refused.code, reason: refused.body.message }, "agent tunnel no longer admitted; closing it");
              d.gate.g.audit.record({ uri: url, attrs, user, sourceIP: req.socket.remoteAddress ?? "", userAgent: req.headers["user-agent"], code: refused.code, receivedAt: new Date(), reason: refused.body.message });
              ws.close(TUNNEL_REFUSED, String(refused.body.message ?? "").slice(0, 120));
            });
          }, d.settings.tunnelRecheckMs ?? 30_000);
          recheck.unref();
          ws.once("close", () => {
            clearInterval(recheck);
            app.log.info({ cluster, user: user.name }, "agent tunnel closed");
          });
        });
      } catch (e) {
        code = toHttpError(e).code;
        if (code >= 500) app.log.error({ err: e, cluster }, "opening an agent tunnel failed");
        refuse(socket, e);
      } finally {
        d.gate.g.audit.record({ uri: url, attrs, user: record.user, sourceIP: req.socket.remoteAddress ?? "", userAgent: req.headers["user-agent"], code, receivedAt, reason: record.reason });
      }
    })();
  });

  return {
    tunnels,
    close: () => {
      clients.closeAll();
      tunnels.closeAll();
      wss.close();
    },
  };
}
