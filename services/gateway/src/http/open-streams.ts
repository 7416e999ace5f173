import type { FastifyInstance } from "fastify";

/**
 * The streams a server holds open (REST watches, proxied watches and logs), ended when it
 * closes: otherwise close() waits for every client to hang up or for its keep-alive to run out.
 * Clients watch again, from their resourceVersion, at another replica.
 */
export class OpenStreams {
  private readonly open = new Set<() => void>();
  /** True once the server has begun to close. */
  closing = false;

  /** Registers how to end one stream; returns its removal (call it when the stream ends by itself). */
  add(end: () => void): () => void {
    this.open.add(end);
    return () => void this.open.delete(end);
  }

  closeAll(): void {
    this.closing = true;
    for (const end of [...this.open]) end();
    this.open.clear();
  }
}

/** Streams of `app`, ended before it closes (a preClose hook). */
export function openStreams(app: FastifyInstance): OpenStreams {
  const streams = new OpenStreams();
  app.addHook("preClose", (done) => {
    streams.closeAll();
    done();
  });
  return streams;
}
