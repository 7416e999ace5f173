import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";
import { PassThrough } from "node:stream";
import { WebSocket } from "ws";
import { FrameType, ProtocolError, chunks, decodeFrame, encodeFrame, encodeJson, parseRequestHead, tunnelPath } from "./logic/frame.js";

/** What the agent does with one proxied request: send it to its member and hand back the answer. */
export type MemberForward = (o: { method: string; path: string; headers: OutgoingHttpHeaders; body?: NodeJS.ReadableStream; signal: AbortSignal }) => Promise<IncomingMessage>;

export interface TunnelClientOptions {
  /** The gateway's base URL (https://host:port). */
  url: string;
  cluster: string;
  /** The agent's bearer token, read again at every connect. */
  token: () => string;
  ca?: string;
  insecureSkipTLSVerify?: boolean;
  forward: MemberForward;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void; debug(o: object, m: string): void };
  /** How long to wait between pings of a quiet connection (a connection without an answer for two is dropped). */
  pingMs?: number;
  /** Unsent bytes on the tunnel above which a member's body is paused. */
  highWaterBytes?: number;
}

/** Request headers the agent never sends to its member, whatever the gateway sent: credentials are the agent's own. */
const DROPPED = /^(authorization|cookie|host|proxy-authorization|connection|keep-alive|transfer-encoding|upgrade|te|trailer)$/;

/**
 * The agent's side of its tunnel: one outbound WebSocket to the gateway's
 * `clusters/<cluster>/tunnel`, kept open (reconnecting with backoff, 0.5 s doubling to 30 s), over
 * which the gateway sends the cluster proxy's requests; each goes to the member with the agent's
 * member credentials and its answer streams back.
 */
export class TunnelClient {
  private ws?: WebSocket;
  private stopped = false;
  private failures = 0;
  private retry?: NodeJS.Timeout;
  private readonly active = new Map<number, { ac: AbortController; body?: PassThrough; res?: IncomingMessage }>();
  private connectedAt = 0;
  /** Whether the tunnel is open now. */
  connected = false;

  constructor(private readonly o: TunnelClientOptions) {}

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.ws?.close(1000, "the agent is stopping");
    this.ws?.terminate();
    this.cutAll();
  }

  private connect() {
    if (this.stopped) return;
    const url = new URL(tunnelPath(this.o.cluster), this.o.url);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(url, {
      headers: { authorization: `Bearer ${this.o.token()}` },
      ...(this.o.ca ? { ca: this.o.ca } : {}),
      rejectUnauthorized: !this.o.insecureSkipTLSVerify,
      handshakeTimeout: 10_000,
      maxPayload: 2 << 20,
    });
    this.ws = ws;
    let alive = true;
    let ping: NodeJS.Timeout | undefined;
    ws.on("open", () => {
      this.connected = true;
      this.connectedAt = Date.now();
      this.o.log.info({ cluster: this.o.cluster }, "proxy tunnel to the gateway open");
      ping = setInterval(() => {
        if (!alive) return void ws.terminate();
        alive = false;
        ws.ping();
      }, this.o.pingMs ?? 20_000);
      ping.unref();
    });
    ws.on("ping", () => (alive = true));
    ws.on("pong", () => (alive = true));
    ws.on("unexpected-response", (_req, res) => {
      // the gateway refused the tunnel: say why (401, 403 naming the rule, 409 Push mode), then try again later
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.length < 16 && parts.push(c));
      res.on("end", () => {
        let message = "";
        try {
          message = String((JSON.parse(Buffer.concat(parts).toString("utf8")) as { message?: unknown }).message ?? "");
        } catch {
          /* not a Status */
        }
        this.o.log.warn({ cluster: this.o.cluster, code: res.statusCode, message }, "the gateway refused the proxy tunnel; retrying");
        ws.terminate();
      });
    });
    ws.on("message", (data, isBinary) => {
      alive = true;
      try {
        if (!isBinary) throw new ProtocolError("a text message");
        this.receive(data as Buffer);
      } catch (err) {
        this.o.log.warn({ err, cluster: this.o.cluster }, "the gateway broke the tunnel protocol; reconnecting");
        ws.terminate();
      }
    });
    ws.on("error", (err) => this.o.log.debug({ err, cluster: this.o.cluster }, "proxy tunnel error"));
    ws.on("close", () => {
      clearInterval(ping);
      if (this.ws === ws) this.ws = undefined;
      const wasOpen = this.connected;
      this.connected = false;
      this.cutAll();
      if (this.stopped) return;
      // a tunnel that stayed up a while starts the backoff over
      if (wasOpen && Date.now() - this.connectedAt > 30_000) this.failures = 0;
      this.failures++;
      const wait = Math.min(30_000, 500 * 2 ** Math.min(this.failures - 1, 6));
      if (wasOpen) this.o.log.warn({ cluster: this.o.cluster, retryInMs: wait }, "proxy tunnel to the gateway closed; reconnecting");
      this.retry = setTimeout(() => this.connect(), wait);
      this.retry.unref?.();
    });
  }

  private send(ws: WebSocket, frame: Uint8Array) {
    if (ws.readyState === WebSocket.OPEN) ws.send(frame);
  }

  private receive(data: Buffer) {
    const ws = this.ws;
    if (!ws) return;
    const f = decodeFrame(data);
    switch (f.type) {
      case FrameType.Request: {
        if (this.active.has(f.stream)) throw new ProtocolError(`stream ${f.stream} opened twice`);
        const head = parseRequestHead(f.payload);
        const headers: OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(head.headers)) if (!DROPPED.test(k)) headers[k] = v;
        const s: { ac: AbortController; body?: PassThrough; res?: IncomingMessage } = { ac: new AbortController(), ...(head.body ? { body: new PassThrough() } : {}) };
        this.active.set(f.stream, s);
        void this.serve(ws, f.stream, s, { ...head, headers });
        return;
      }
      case FrameType.Data: {
        const s = this.active.get(f.stream);
        if (s?.body) s.body.write(Buffer.from(f.payload));
        return;
      }
      case FrameType.End:
        this.active.get(f.stream)?.body?.end();
        return;
      case FrameType.Reset: {
        const s = this.active.get(f.stream);
        this.active.delete(f.stream);
        if (s) this.cut(s);
        return;
      }
      default:
        throw new ProtocolError(`frame type ${f.type} from the gateway`);
    }
  }

  private async serve(ws: WebSocket, id: number, s: { ac: AbortController; body?: PassThrough; res?: IncomingMessage }, head: { method: string; path: string; headers: OutgoingHttpHeaders }) {
    let res: IncomingMessage;
    try {
      res = await this.o.forward({ method: head.method, path: head.path, headers: head.headers, ...(s.body ? { body: s.body } : {}), signal: s.ac.signal });
    } catch (e) {
      if (this.active.delete(id)) {
        // a Node error code (ECONNREFUSED) or the error's name (a FlotillaError's `code` is its gRPC one, a number)
        const err = e as { code?: unknown; name?: string };
        this.send(ws, encodeJson(FrameType.Reset, id, { code: typeof err.code === "string" ? err.code : (err.name ?? "Error") }));
      }
      return;
    }
    if (!this.active.has(id)) return void res.destroy();
    s.res = res;
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = v;
    this.send(ws, encodeJson(FrameType.Response, id, { status: res.statusCode ?? 502, headers }));
    const high = this.o.highWaterBytes ?? 8 << 20;
    res.on("data", (c: Buffer) => {
      for (const piece of chunks(c)) this.send(ws, encodeFrame(FrameType.Data, id, piece));
      // a slow tunnel: hold the member's body until what is queued has gone out
      if (ws.bufferedAmount > high) {
        res.pause();
        const wait = setInterval(() => {
          if (ws.readyState !== WebSocket.OPEN || ws.bufferedAmount <= high / 2) {
            clearInterval(wait);
            res.resume();
          }
        }, 50);
      }
    });
    res.on("end", () => {
      if (this.active.delete(id)) this.send(ws, encodeFrame(FrameType.End, id));
    });
    res.on("error", () => {
      if (this.active.delete(id)) this.send(ws, encodeJson(FrameType.Reset, id, { code: "ECONNRESET" }));
    });
  }

  private cut(s: { ac: AbortController; body?: PassThrough; res?: IncomingMessage }) {
    s.ac.abort();
    s.body?.destroy();
    s.res?.destroy();
  }

  private cutAll() {
    for (const s of this.active.values()) this.cut(s);
    this.active.clear();
  }
}
