import http from "node:http";
import https from "node:https";
import type { Connection } from "./logic/kubeconfig.js";

/** A Kubernetes Status answer (or a transport failure) as kubectl reports it: `Error from server (Reason): message`. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    message: string,
    readonly code: number,
    readonly reason: string,
  ) {
    super(message);
  }
  /** kubectl's wording. */
  get display(): string {
    return this.code ? `Error from server (${this.reason}): ${this.message}` : this.message;
  }
}

export const TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

export interface Answer {
  status: number;
  text: string;
}

/** The gateway as one user sees it (the kubeconfig's server, CA and token). */
export class GatewayClient {
  private readonly agent: http.Agent;
  constructor(
    readonly conn: Connection & { ca?: string },
    private readonly timeoutMs = 30_000,
  ) {
    this.agent = conn.server.startsWith("https:") ? new https.Agent({ keepAlive: true, rejectUnauthorized: !conn.insecure, ...(conn.ca ? { ca: conn.ca } : {}) }) : new http.Agent({ keepAlive: true });
  }

  close(): void {
    this.agent.destroy();
  }

  /** One request; the answer whatever its status (transport failures throw an ApiError with code 0). */
  send(method: string, path: string, o: { body?: unknown; accept?: string; contentType?: string } = {}): Promise<Answer> {
    const body = o.body === undefined ? undefined : typeof o.body === "string" ? o.body : JSON.stringify(o.body);
    const headers: Record<string, string> = { accept: o.accept ?? "application/json", "user-agent": "flotilla-cli" };
    if (this.conn.token) headers.authorization = `Bearer ${this.conn.token}`;
    if (body !== undefined) {
      headers["content-type"] = o.contentType ?? "application/json";
      headers["content-length"] = String(Buffer.byteLength(body));
    }
    const lib = this.conn.server.startsWith("https:") ? https : http;
    return new Promise((resolve, reject) => {
      const req = lib.request(`${this.conn.server}${path}`, { method, headers, agent: this.agent, timeout: this.timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", (e) => reject(transport(this.conn.server, e)));
      });
      req.on("timeout", () => req.destroy(Object.assign(new Error(`no answer within ${this.timeoutMs / 1000} s`), { code: "ETIMEDOUT" })));
      req.on("error", (e) => reject(transport(this.conn.server, e)));
      req.end(body);
    });
  }

  /** The JSON answer of a 2xx, else the Status as an ApiError. */
  async json<T>(method: string, path: string, o: { body?: unknown; accept?: string; contentType?: string } = {}): Promise<T> {
    const a = await this.send(method, path, o);
    return parseAnswer<T>(a, `${method} ${path}`);
  }
}

/** A 2xx answer's JSON, or the Status it carries as an ApiError. */
export function parseAnswer<T>(a: Answer, what: string): T {
  let body: unknown;
  try {
    body = a.text ? JSON.parse(a.text) : undefined;
  } catch {
    body = undefined;
  }
  if (a.status >= 200 && a.status < 300) {
    if (body === undefined && a.text) throw new ApiError(`${what}: the answer is not JSON`, a.status, "InternalError");
    return body as T;
  }
  const s = (body ?? {}) as { message?: string; reason?: string };
  throw new ApiError(s.message ?? `${what}: HTTP ${a.status}${a.text ? `: ${a.text.slice(0, 200)}` : ""}`, a.status, s.reason ?? "Unknown");
}

function transport(server: string, e: Error & { code?: string }): ApiError {
  const why = e.code === "ECONNREFUSED" ? "connection refused" : e.code === "ENOTFOUND" ? "host not found" : e.message;
  return new ApiError(`Unable to connect to the server ${server}: ${why}`, 0, "");
}
