import { PassThrough, type Readable } from "node:stream";
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import type { WebSocket } from "ws";
import { FlotillaError } from "@flotilla/api";
import { FrameType, ProtocolError, chunks, decodeFrame, encodeFrame, encodeJson, parseReset, parseResponseHead, type Headers } from "./logic/frame.js";

/** What the member answered, through the agent. */
export interface TunnelResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The body as it comes (a watch streams until either side closes). Destroying it resets the stream. */
  body: Readable;
}

/**
 * The tunnel failed before the member answered (no tunnel, the tunnel closed, the member or the
 * agent reset the stream, no answer in time): the member cannot be reached now, a
 * `ServiceUnavailable` (503, UNAVAILABLE, retryable). `errorCode` says why, a Node error code or
 * name (ECONNREFUSED, TimeoutError, TunnelClosed); `code` is the gRPC code, as of every FlotillaError.
 */
export class TunnelRequestError extends FlotillaError {
  override readonly name = "TunnelRequestError";
  constructor(
    message: string,
    readonly errorCode: string,
  ) {
    super("ServiceUnavailable", message);
  }
}

interface Pending {
  resolve(r: TunnelResponse): void;
  reject(e: Error): void;
  body?: PassThrough;
  started: boolean;
}

/** One agent's connection: many proxied requests at once, each a stream of frames. */
class Connection {
  private next = 1;
  private readonly streams = new Map<number, Pending>();
  private alive = true;
  private readonly ping: NodeJS.Timeout;
  closed = false;

  constructor(
    readonly cluster: string,
    readonly user: string,
    private readonly ws: WebSocket,
    private readonly onClose: (c: Connection) => void,
    pingMs: number,
  ) {
    ws.on("message", (data, isBinary) => this.receive(data as Buffer, isBinary));
    ws.on("pong", () => (this.alive = true));
    ws.on("close", () => this.shut());
    ws.on("error", () => this.shut());
    this.ping = setInterval(() => {
      if (!this.alive) return void ws.terminate();
      this.alive = false;
      ws.ping();
    }, pingMs);
    this.ping.unref();
  }

  private send(frame: Uint8Array) {
    if (!this.closed) this.ws.send(frame);
  }

  private receive(data: Buffer, isBinary: boolean) {
    try {
      if (!isBinary) throw new ProtocolError("a text message");
      const f = decodeFrame(data);
      const s = this.streams.get(f.stream);
      if (!s) return; // a stream the gateway already ended
      switch (f.type) {
        case FrameType.Response: {
          if (s.started) throw new ProtocolError("a second response head");
          const head = parseResponseHead(f.payload);
          s.started = true;
          s.body = new PassThrough();
          s.body.once("close", () => {
            // the caller went away (or the body ended): tell the agent, once
            if (this.streams.delete(f.stream) && !s.body!.writableFinished) this.send(encodeFrame(FrameType.Reset, f.stream));
          });
          s.resolve({ statusCode: head.status, headers: head.headers as IncomingHttpHeaders, body: s.body });
          return;
        }
        case FrameType.Data:
          if (!s.body) throw new ProtocolError("body data before the response head");
          s.body.write(Buffer.from(f.payload));
          return;
        case FrameType.End:
          if (!s.body) throw new ProtocolError("the end of a body before the response head");
          this.streams.delete(f.stream);
          s.body.end();
          return;
        case FrameType.Reset: {
          this.streams.delete(f.stream);
          const { code = "ECONNRESET" } = parseReset(f.payload);
          if (s.body) s.body.destroy(new TunnelRequestError("the agent reset the stream", code));
          else s.reject(new TunnelRequestError("the member did not answer the agent", code));
          return;
        }
        default:
          throw new ProtocolError(`frame type ${f.type} from an agent`);
      }
    } catch {
      // an agent that breaks the protocol loses its tunnel (its requests fail; it reconnects)
      this.ws.terminate();
      this.shut();
    }
  }

  forward(o: { method: string; path: string; headers: OutgoingHttpHeaders; body?: NodeJS.ReadableStream; timeoutMs: number; signal?: AbortSignal }): Promise<TunnelResponse> {
    if (this.closed) return Promise.reject(new TunnelRequestError("the agent's tunnel closed", "TunnelClosed"));
    const id = this.next;
    this.next = this.next >= 0xfffffffe ? 1 : this.next + 1;
    return new Promise<TunnelResponse>((resolve, reject) => {
      const headers: Headers = {};
      for (const [k, v] of Object.entries(o.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.map(String) : String(v);
      const settle = () => (clearTimeout(timer), o.signal?.removeEventListener("abort", onAbort));
      const fail = (e: Error) => {
        if (!this.streams.delete(id)) return;
        settle();
        this.send(encodeFrame(FrameType.Reset, id));
        reject(e);
      };
      const timer = setTimeout(() => fail(new TunnelRequestError(`no answer within ${o.timeoutMs} ms`, "TimeoutError")), o.timeoutMs);
      const onAbort = () => fail(new TunnelRequestError("the request was aborted", "AbortError"));
      this.streams.set(id, {
        started: false,
        resolve: (r) => (settle(), resolve(r)),
        reject: (e) => (settle(), reject(e)),
      });
      if (o.signal?.aborted) return onAbort();
      o.signal?.addEventListener("abort", onAbort, { once: true });
      this.send(encodeJson(FrameType.Request, id, { method: o.method, path: o.path, headers, body: !!o.body }));
      if (!o.body) return;
      o.body.on("data", (c: Buffer | string) => {
        if (!this.streams.has(id)) return;
        for (const piece of chunks(typeof c === "string" ? Buffer.from(c) : c)) this.send(encodeFrame(FrameType.Data, id, piece));
      });
      o.body.on("end", () => this.streams.has(id) && this.send(encodeFrame(FrameType.End, id)));
      o.body.on("error", () => fail(new TunnelRequestError("the request body failed", "ECONNRESET")));
    });
  }

  /** Ends every stream: pending requests fail, bodies in flight are cut. */
  private shut() {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.ping);
    for (const [, s] of this.streams) {
      const e = new TunnelRequestError("the agent's tunnel closed", "TunnelClosed");
      if (s.body) s.body.destroy(e);
      else s.reject(e);
    }
    this.streams.clear();
    this.onClose(this);
  }

  close() {
    this.ws.close(1001, "the gateway is stopping");
    // an agent that does not answer the close within a second is cut (a stopping server waits for it)
    setTimeout(() => this.ws.terminate(), 1000).unref();
    this.shut();
  }
}

/**
 * The gateway's side of the agents' tunnels: at most one connection per cluster on this replica
 * (a new one replaces the old, which is closed), and proxied requests sent over it.
 */
export class TunnelHub {
  private readonly byCluster = new Map<string, Connection>();

  constructor(private readonly o: { pingMs?: number } = {}) {}

  /** Takes an accepted WebSocket as the cluster's tunnel. */
  attach(cluster: string, user: string, ws: WebSocket): void {
    const old = this.byCluster.get(cluster);
    const c = new Connection(cluster, user, ws, (gone) => this.byCluster.get(cluster) === gone && this.byCluster.delete(cluster), this.o.pingMs ?? 20_000);
    this.byCluster.set(cluster, c);
    old?.close();
  }

  has(cluster: string): boolean {
    return this.byCluster.has(cluster);
  }

  /** Sends a request through the cluster's tunnel; rejects with a TunnelRequestError when it cannot. */
  forward(cluster: string, o: { method: string; path: string; headers: OutgoingHttpHeaders; body?: NodeJS.ReadableStream; timeoutMs: number; signal?: AbortSignal }): Promise<TunnelResponse> {
    const c = this.byCluster.get(cluster);
    if (!c) return Promise.reject(new TunnelRequestError("no tunnel", "TunnelClosed"));
    return c.forward(o);
  }

  closeAll(): void {
    for (const c of [...this.byCluster.values()]) c.close();
    this.byCluster.clear();
  }
}
