import Fastify, { type FastifyInstance } from "fastify";
import { checkFault, ConfigError, validateConfig, type ClusterConfig, type FaultSpec, type NodeConfig } from "./config.js";
import type { Simulator } from "./simulator.js";

class AdminError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The admin API (a separate listener, no auth: bind it to loopback):
 *   GET    /admin/healthz
 *   GET    /admin/clusters                      {clusters: ClusterInfo[]}
 *   POST   /admin/clusters                      ClusterConfig → 201 ClusterInfo
 *   GET    /admin/clusters/:name                ClusterInfo
 *   DELETE /admin/clusters/:name
 *   PUT    /admin/clusters/:name/fault          {mode, latencyMs?} → ClusterInfo
 *   PUT    /admin/clusters/:name/ready-delay    {readyDelayMs: number | null} → ClusterInfo
 *   PUT    /admin/clusters/:name/nodes          {nodes: NodeConfig[]} → ClusterInfo
 *   PUT    /admin/clusters/:name/workload-health {kind: Deployment|StatefulSet, namespace?, name, healthy} → {unhealthy: ["Kind/ns/name"]}
 *   POST   /admin/clusters/:name/flush          runs waiting workload work now → ClusterInfo
 *   GET    /admin/clusters/:name/objects        ?apiVersion=&kind=&namespace= → {items}
 *   GET    /admin/clusters/:name/summary        ResourceSummary
 *   GET    /admin/defaults, PUT /admin/defaults {readyDelayMs}
 * Errors are {error: message} with a 4xx code.
 */
export function buildAdminApi(sim: Simulator): FastifyInstance {
  const app = Fastify({ logger: false });

  const cluster = (name: string) => {
    const c = sim.clusters.find((x) => x.name === name);
    if (!c) throw new AdminError(404, `no cluster named ${JSON.stringify(name)}`);
    return c;
  };
  type Named = { Params: { name: string } };

  app.setErrorHandler((err, _req, reply) => {
    const e = err as { statusCode?: number; message?: string };
    const code = typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500 ? e.statusCode : 500;
    return reply.code(code).send({ error: code === 500 ? `internal error: ${e.message ?? String(err)}` : (e.message ?? "bad request") });
  });
  app.setNotFoundHandler((req, reply) => reply.code(404).send({ error: `no admin route ${req.method} ${req.url}` }));

  app.get("/admin/healthz", async () => "ok");
  app.get("/admin/clusters", async () => ({ clusters: sim.info() }));

  app.post<{ Body: ClusterConfig }>("/admin/clusters", async (req, reply) => {
    try {
      validateConfig({ clusters: [req.body] });
    } catch (e) {
      if (e instanceof ConfigError) throw new AdminError(400, e.problems.join("; "));
      throw e;
    }
    if (sim.clusters.some((c) => c.name === req.body.name)) throw new AdminError(409, `cluster ${req.body.name} already exists`);
    const c = await sim.addCluster(req.body);
    return reply.code(201).send(c.info());
  });

  app.get<Named>("/admin/clusters/:name", async (req) => cluster(req.params.name).info());

  app.delete<Named>("/admin/clusters/:name", async (req) => {
    cluster(req.params.name);
    await sim.removeCluster(req.params.name);
    return { removed: req.params.name };
  });

  app.put<Named & { Body: FaultSpec }>("/admin/clusters/:name/fault", async (req) => {
    const c = cluster(req.params.name);
    const problems: string[] = [];
    checkFault(req.body, "fault", problems);
    if (problems.length) throw new AdminError(400, problems.join("; "));
    await c.setFault(req.body);
    return c.info();
  });

  app.put<Named & { Body: { readyDelayMs?: number | null } }>("/admin/clusters/:name/ready-delay", async (req) => {
    const c = cluster(req.params.name);
    const ms = req.body?.readyDelayMs;
    if (ms !== null && !(typeof ms === "number" && ms >= 0)) throw new AdminError(400, "readyDelayMs: must be a number >= 0, or null for the default");
    c.setReadyDelay(ms ?? undefined);
    return c.info();
  });

  app.put<Named & { Body: { nodes?: NodeConfig[] } }>("/admin/clusters/:name/nodes", async (req) => {
    const c = cluster(req.params.name);
    try {
      validateConfig({ clusters: [{ name: c.name, nodes: req.body?.nodes ?? null }] });
    } catch (e) {
      if (e instanceof ConfigError) throw new AdminError(400, e.problems.join("; "));
      throw e;
    }
    c.setNodes(req.body.nodes!);
    return c.info();
  });

  app.put<Named & { Body: { kind?: string; namespace?: string; name?: string; healthy?: boolean } }>("/admin/clusters/:name/workload-health", async (req) => {
    const c = cluster(req.params.name);
    const b = req.body ?? {};
    const problems: string[] = [];
    if (b.kind !== "Deployment" && b.kind !== "StatefulSet") problems.push("kind: must be Deployment or StatefulSet");
    if (typeof b.name !== "string" || !b.name) problems.push("name: required");
    if (b.namespace !== undefined && typeof b.namespace !== "string") problems.push("namespace: must be a string");
    if (typeof b.healthy !== "boolean") problems.push("healthy: must be true or false");
    if (problems.length) throw new AdminError(400, problems.join("; "));
    c.controller.setUnhealthy(b.kind as "Deployment" | "StatefulSet", b.namespace ?? "default", b.name!, !b.healthy);
    return { unhealthy: c.controller.unhealthy };
  });

  app.post<Named>("/admin/clusters/:name/flush", async (req) => {
    const c = cluster(req.params.name);
    c.flush();
    return c.info();
  });

  app.get<Named & { Querystring: { apiVersion?: string; kind?: string; namespace?: string } }>("/admin/clusters/:name/objects", async (req) => {
    const q = req.query;
    return {
      items: cluster(req.params.name).objects({
        ...(q.apiVersion ? { apiVersion: q.apiVersion } : {}),
        ...(q.kind ? { kind: q.kind } : {}),
        ...(q.namespace !== undefined ? { namespace: q.namespace } : {}),
      }),
    };
  });

  app.get<Named>("/admin/clusters/:name/summary", async (req) => cluster(req.params.name).summary());

  app.get("/admin/defaults", async () => ({ readyDelayMs: sim.readyDelayMs }));
  app.put<{ Body: { readyDelayMs?: number } }>("/admin/defaults", async (req) => {
    const ms = req.body?.readyDelayMs;
    if (!(typeof ms === "number" && ms >= 0)) throw new AdminError(400, "readyDelayMs: must be a number >= 0");
    sim.setReadyDelay(ms);
    return { readyDelayMs: sim.readyDelayMs };
  });

  return app;
}
