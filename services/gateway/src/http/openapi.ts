import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { NotFoundError } from "@flotilla/api";
import { groupVersionDocuments, openApiDocument, openApiIndex, served, type ServedDocument } from "../logic/openapi.js";

/** A year: what kube-apiserver lets clients keep a document fetched by its hash. */
const IMMUTABLE = "public, immutable, max-age=31536000";

const built = new Map<string, { docs: Map<string, ServedDocument>; index: ServedDocument; all: ServedDocument }>();
/** The documents of a server version, built once per process (they depend on nothing else). */
function documents(serverVersion: string) {
  let d = built.get(serverVersion);
  if (!d) {
    const docs = groupVersionDocuments(serverVersion);
    d = { docs, index: served(openApiIndex(docs)), all: served(openApiDocument(serverVersion)) };
    built.set(serverVersion, d);
  }
  return d;
}

/** Answers `doc` with its ETag, or 304 when the client holds that version (If-None-Match). */
function sendDocument(req: FastifyRequest, reply: FastifyReply, doc: ServedDocument, cacheControl: string) {
  const etag = `"${doc.hash}"`;
  void reply.header("etag", etag).header("cache-control", cacheControl).header("vary", "Accept");
  const match = req.headers["if-none-match"];
  if (match && match.split(",").some((t) => t.trim() === etag || t.trim() === "*")) return reply.code(304).send();
  return reply.type("application/json").send(doc.json);
}

/**
 * The OpenAPI documents: kube-apiserver's /openapi/v3 discovery, which kubectl reads to validate
 * (it sends fieldValidation=Strict when a kind's PATCH takes it), to explain fields and to pick a
 * kind's patch type, and /openapi.json, every group-version in one document for /docs. No
 * /openapi/v2: kubectl 1.27 and later read v3 (v2 is protobuf-only for kubectl).
 */
export function registerOpenApiRoutes(app: FastifyInstance, serverVersion: string) {
  const { docs, index, all } = documents(serverVersion);

  app.get("/openapi.json", async (req, reply) => sendDocument(req, reply, all, "no-cache, private"));
  app.get("/openapi/v3", async (req, reply) => sendDocument(req, reply, index, "no-cache, private"));
  app.get("/openapi/v3/*", async (req, reply) => {
    const path = (req.params as { "*": string })["*"].replace(/\/+$/, "");
    const doc = docs.get(path);
    if (!doc) throw new NotFoundError({ group: "", kind: "OpenAPI document", name: path });
    const hash = (req.query as { hash?: string }).hash;
    // by its hash: the document never changes, or the client is sent to the current one (as kube-apiserver)
    if (hash === undefined || hash === "") return sendDocument(req, reply, doc, "no-cache, private");
    if (hash !== doc.hash) return reply.code(301).header("location", `/openapi/v3/${path}?hash=${doc.hash}`).header("cache-control", "no-cache, private").send();
    return sendDocument(req, reply, doc, IMMUTABLE);
  });
}
