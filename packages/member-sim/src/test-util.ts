// Helpers shared by this package's tests (excluded from the build).
import type { TestContext } from "node:test";
import { startSimulator, type Simulator } from "./simulator.js";
import type { SimCluster } from "./cluster.js";
import type { SimulatorConfig } from "./config.js";

export interface KubeResponse {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  headers: Headers;
}

/** One request to a simulated cluster's API, with its token unless `token` says otherwise. */
export async function kube(
  c: SimCluster,
  method: string,
  path: string,
  body?: unknown,
  opts: { contentType?: string; token?: string | null; accept?: string } = {},
): Promise<KubeResponse> {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? c.token : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (opts.accept) headers.accept = opts.accept;
  if (body !== undefined) headers["content-type"] = opts.contentType ?? "application/json";
  const res = await fetch(c.url + path, {
    method,
    headers,
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // plain text (health endpoints)
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Starts a simulator (no admin listener unless asked) and closes it when the test ends. */
export async function simulator(t: TestContext, config: Partial<SimulatorConfig> & Pick<SimulatorConfig, "clusters">): Promise<Simulator> {
  const sim = await startSimulator({ admin: false, ...config });
  t.after(() => sim.close());
  return sim;
}

/** Retries `fn` until it stops throwing, or rethrows its last error after `timeoutMs`. */
export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 3000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A Deployment whose single container requests `cpu` (and optionally `memory`). */
export function deployment(name: string, replicas: number, cpu = "100m", memory?: string, namespace = "default") {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "main", image: "nginx:1.25", resources: { requests: { cpu, ...(memory ? { memory } : {}) } } }] },
      },
    },
  };
}

export function configMap(name: string, data: Record<string, string>, namespace = "default", labels?: Record<string, string>) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, ...(labels ? { labels } : {}) }, data };
}
