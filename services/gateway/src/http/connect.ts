import type { FastifyInstance } from "fastify";
import { createContextValues } from "@connectrpc/connect";
import { fastifyConnectPlugin } from "@connectrpc/connect-fastify";
import { MAX_REQUEST_BYTES } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import { ObjectService } from "@flotilla/proto";
import { CONNECT_CLIENT, connectObjectService, type CallGuard } from "../grpc.js";

/** The procedures served over Connect and gRPC-Web (`/flotilla.gateway.v1.ObjectService/<Method>`): their calls authenticate through the gRPC front's guard, not the REST hook. */
export const CONNECT_PATHS: ReadonlySet<string> = new Set(ObjectService.methods.map((m) => `/${ObjectService.typeName}/${m.name}`));

/**
 * ObjectService over the Connect protocol and gRPC-Web on the REST server
 * (@connectrpc/connect-fastify): the gRPC front's methods and guard (connectObjectService), the
 * REST request limit (a bigger message is RESOURCE_EXHAUSTED), the REST server's CORS. Plain gRPC
 * stays on GRPC_PORT (HTTP/2). Its content types are read in a scope of their own, so the REST
 * routes' body parsers are untouched.
 */
export function registerConnect(app: FastifyInstance, log: Logger, guard: CallGuard): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // open Watch streams end when the server closes (as the REST watches do), and so does their
    // connection, which kept alive would hold close() up: clients watch again at another replica
    const shutdown = new AbortController();
    scope.addHook("preClose", (done) => {
      shutdown.abort();
      done();
    });
    scope.addHook("onRequest", async (req, reply) => {
      reply.raw.once("finish", () => {
        if (shutdown.signal.aborted) req.raw.socket?.end();
      });
    });
    await scope.register(fastifyConnectPlugin, {
      routes: (router) => router.service(ObjectService, connectObjectService(log, guard)),
      contextValues: (req) => createContextValues().set(CONNECT_CLIENT, req.ip),
      readMaxBytes: MAX_REQUEST_BYTES,
      connect: true,
      grpcWeb: true,
      grpc: false,
      shutdownSignal: shutdown.signal,
    });
  });
}
