import http from "node:http";
import https from "node:https";
import { createInterface } from "node:readline";
import { FlotillaError, REASONS, reasonForHttp, type KubeObject, type StatusReason } from "@flotilla/api";

export interface GatewayClientOptions {
  /** Base URL of the Flotilla gateway (https://host:port). */
  url: string;
  /** Bearer token (a service account token); read again for every request, so a rotated file is picked up. */
  token: () => string;
  /** PEM CA bundle that signed the gateway's certificate. */
  ca?: string;
  insecureSkipTLSVerify?: boolean;
  timeoutMs?: number;
}

/** The reason a Status names, when the taxonomy knows it; else the one of its HTTP status. */
const reasonOf = (reason: string, status: number): StatusReason => (Object.hasOwn(REASONS, reason) ? (reason as StatusReason) : reasonForHttp(status));

/**
 * A Kubernetes Status the gateway answered with, as the FlotillaError it names (its reason, else
 * the reason of its HTTP status); `status` is the HTTP status it came with.
 */
export class GatewayError extends FlotillaError {
  override readonly name = "GatewayError";
  constructor(
    readonly status: number,
    reason: string,
    message: string,
  ) {
    super(reasonOf(reason, status), message);
  }
}

/** The gateway did not answer (down, refused, timed out): `ServiceUnavailable`, retry later. */
export class GatewayUnreachableError extends FlotillaError {
  override readonly name = "GatewayUnreachableError";
  constructor(message: string, options?: { cause?: unknown }) {
    super("ServiceUnavailable", message, options);
  }
}

export const isNotFound = (e: unknown) => e instanceof GatewayError && e.status === 404;
export const isConflictError = (e: unknown) => e instanceof GatewayError && e.status === 409 && e.reason !== "AlreadyExists";

export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: KubeObject & { code?: number; reason?: string; message?: string };
}

/**
 * The agent's only connection to the control plane: outbound REST calls to the gateway's
 * Kubernetes API with the agent's token (no Postgres, no NATS).
 */
export class GatewayClient {
  private readonly agent: http.Agent;
  private readonly base: URL;
  private readonly timeoutMs: number;

  constructor(private readonly o: GatewayClientOptions) {
    this.base = new URL(o.url);
    this.timeoutMs = o.timeoutMs ?? 10_000;
    const opts = { keepAlive: true, maxSockets: 16 };
    this.agent = this.base.protocol === "https:" ? new https.Agent({ ...opts, rejectUnauthorized: !o.insecureSkipTLSVerify, ...(o.ca ? { ca: o.ca } : {}) }) : new http.Agent(opts);
  }

  private open(method: string, path: string, body: unknown, signal?: AbortSignal, timeoutMs?: number): Promise<http.IncomingMessage> {
    const url = new URL(path, this.base);
    const lib = url.protocol === "https:" ? https : http;
    const data = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = lib.request(
        url,
        {
          method,
          agent: this.agent,
          signal,
          ...(timeoutMs ? { timeout: timeoutMs } : {}),
          headers: { authorization: `Bearer ${this.o.token()}`, accept: "application/json", ...(data !== undefined ? { "content-type": "application/json", "content-length": Buffer.byteLength(data) } : {}) },
        },
        resolve,
      );
      req.on("timeout", () => req.destroy(new FlotillaError("Timeout", `${method} ${url.pathname} timed out`)));
      req.on("error", (e) => reject(signal?.aborted ? e : new GatewayUnreachableError(`${method} ${url.pathname}: ${e.message}`, { cause: e })));
      req.end(data);
    });
  }

  async request<T = KubeObject>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const res = await this.open(method, path, body, signal, this.timeoutMs);
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    if ((res.statusCode ?? 0) >= 400) {
      throw new GatewayError(res.statusCode ?? 0, String(parsed.reason ?? ""), String(parsed.message ?? `${method} ${path}: ${res.statusCode}`));
    }
    return parsed as T;
  }

  /** The object at `path`, or undefined when there is none (404). */
  async get<T = KubeObject>(path: string, signal?: AbortSignal): Promise<T | undefined> {
    try {
      return await this.request<T>("GET", path, undefined, signal);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /**
   * Streams a REST watch: every event goes to `onEvent` until the stream ends. Resolves with the
   * HTTP status when the gateway refused to open it (410 Gone, 403…), or with nothing.
   */
  async watch(path: string, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<{ code?: number }> {
    const res = await this.open("GET", path, undefined, signal);
    if ((res.statusCode ?? 0) >= 400) {
      res.resume();
      return { code: res.statusCode };
    }
    const lines = createInterface({ input: res, crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        if (!line.trim()) continue;
        onEvent(JSON.parse(line) as WatchEvent);
      }
    } catch (e) {
      if (!signal.aborted) throw new GatewayUnreachableError(`watch ${path}: ${(e as Error).message}`, { cause: e });
    }
    return {};
  }

  close(): void {
    this.agent.destroy();
  }
}
