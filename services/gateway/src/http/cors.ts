import fastifyCors from "@fastify/cors";
import { cors as connectCors } from "@connectrpc/connect";
import type { FastifyInstance } from "fastify";

/** How long a browser may keep a preflight's answer (seconds). */
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * The origins of CORS_ALLOWED_ORIGINS (comma-separated; empty: none): each an exact
 * `scheme://host[:port]` as a browser sends it in `Origin` (no path, no trailing slash, no
 * wildcard), else an error naming it.
 */
export function parseAllowedOrigins(s: string): string[] {
  const origins = s.split(",").map((o) => o.trim()).filter(Boolean);
  for (const o of origins) {
    let u: URL | undefined;
    try {
      u = new URL(o);
    } catch {
      u = undefined;
    }
    if (!u || o.includes("*") || (u.protocol !== "http:" && u.protocol !== "https:") || u.origin !== o) throw new Error(`${JSON.stringify(o)} is not an origin (scheme://host[:port], as a browser sends it: no path, no trailing slash, no wildcard)`);
  }
  return [...new Set(origins)];
}

/**
 * CORS for browser portals on other origins (@fastify/cors), off without origins. A request
 * whose `Origin` is listed gets `Access-Control-Allow-Origin` echoing it and
 * `Access-Control-Allow-Credentials: true`; any other gets no CORS header (its browser blocks the
 * answer). Every answer varies by `Origin`. A listed origin's preflight (OPTIONS with
 * `Access-Control-Request-Method`) is answered 204 here, before authentication (browsers send
 * no credentials with a preflight); the request that follows is authenticated as any other.
 * Registered before the authentication hook, so that a 401 or 429 reaches the portal's script
 * too. The allowed and exposed headers include the Connect and gRPC-Web protocols' own.
 */
export function registerCors(app: FastifyInstance, origins: readonly string[]): void {
  if (!origins.length) return;
  const allowed = new Set(origins);
  void app.register(fastifyCors, {
    origin: (origin, cb) => cb(null, origin !== undefined && allowed.has(origin) ? origin : false),
    credentials: true,
    methods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
    allowedHeaders: [...new Set(["Authorization", "Content-Type", "Accept", "Impersonate-User", "Impersonate-Group", "Impersonate-Uid", ...connectCors.allowedHeaders])],
    exposedHeaders: [...new Set(["Retry-After", "Warning", "K8s-Status", ...connectCors.exposedHeaders])],
    maxAge: CORS_MAX_AGE_SECONDS,
  });
}
