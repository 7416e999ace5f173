import { test } from "node:test";
import assert from "node:assert/strict";
import {
  AlreadyExistsError,
  BadRequestError,
  ConflictError,
  FlotillaError,
  ForbiddenError,
  GoneError,
  GrpcCode,
  InternalError,
  InvalidError,
  MethodNotAllowedError,
  NotFoundError,
  TooManyRequestsError,
  UnauthorizedError,
  UnavailableError,
  UnsupportedMediaTypeError,
  reasonForHttp,
} from "./errors.js";

const ref = { group: "apps", kind: "Deployment", name: "web" };

test("each error's HTTP status, gRPC code and retryability follow from its reason", () => {
  const cases: [FlotillaError, string, number, GrpcCode, boolean][] = [
    [new NotFoundError(ref), "NotFound", 404, GrpcCode.NOT_FOUND, true],
    [new AlreadyExistsError(ref), "AlreadyExists", 409, GrpcCode.ALREADY_EXISTS, true],
    [new ConflictError(ref), "Conflict", 409, GrpcCode.ABORTED, true],
    [new InvalidError(ref, []), "Invalid", 422, GrpcCode.INVALID_ARGUMENT, false],
    [new BadRequestError("bad"), "BadRequest", 400, GrpcCode.INVALID_ARGUMENT, false],
    [new GoneError("old"), "Expired", 410, GrpcCode.OUT_OF_RANGE, true],
    [new UnavailableError("down"), "ServiceUnavailable", 503, GrpcCode.UNAVAILABLE, true],
    [new MethodNotAllowedError("no"), "MethodNotAllowed", 405, GrpcCode.UNIMPLEMENTED, false],
    [new UnsupportedMediaTypeError("no"), "UnsupportedMediaType", 415, GrpcCode.INVALID_ARGUMENT, false],
    [new UnauthorizedError(), "Unauthorized", 401, GrpcCode.UNAUTHENTICATED, false],
    [new ForbiddenError("no"), "Forbidden", 403, GrpcCode.PERMISSION_DENIED, false],
    [new TooManyRequestsError("slow down", 3), "TooManyRequests", 429, GrpcCode.RESOURCE_EXHAUSTED, true],
    [new InternalError(), "InternalError", 500, GrpcCode.INTERNAL, true],
  ];
  for (const [e, reason, http, grpc, retryable] of cases) {
    assert.equal(e.reason, reason, e.name);
    assert.equal(e.httpStatus, http, e.name);
    assert.equal(e.code, grpc, e.name);
    assert.equal(e.retryable, retryable, e.name);
    assert.equal(e.toStatus().code, http, e.name);
    assert.equal(e.toStatus().reason, reason, e.name);
    assert.ok(e instanceof FlotillaError && e instanceof Error);
  }
});

test("Status details name the object as kube-apiserver does", () => {
  assert.deepEqual(new NotFoundError(ref).toStatus(), {
    apiVersion: "v1",
    kind: "Status",
    metadata: {},
    status: "Failure",
    message: 'Deployment.apps "web" not found',
    reason: "NotFound",
    details: { name: "web", group: "apps", kind: "deployment" },
    code: 404,
  });
  const invalid = new InvalidError(ref, [{ field: "spec.replicas", reason: "FieldValueInvalid", message: "must be >= 0" }]).toStatus();
  assert.equal(invalid.message, 'Deployment.apps "web" is invalid: spec.replicas: must be >= 0');
  assert.deepEqual(invalid.details, { name: "web", group: "apps", kind: "Deployment", causes: [{ reason: "FieldValueInvalid", message: "must be >= 0", field: "spec.replicas" }] });
  assert.equal(new BadRequestError("bad").toStatus().details, undefined);
  assert.deepEqual(new BadRequestError("bad", [{ field: "q", reason: "FieldValueInvalid", message: "no" }]).toStatus().details, { causes: [{ reason: "FieldValueInvalid", message: "no", field: "q" }] });
  assert.deepEqual(new TooManyRequestsError("slow down", 7).toStatus().details, { retryAfterSeconds: 7 });
  assert.deepEqual(new ForbiddenError("no", { group: "", kind: "secrets", name: "s" }).toStatus().details, { group: "", kind: "secrets", name: "s" });
});

test("from(unknown): itself, an HTTP server's own 4xx, or an internal error that says nothing", () => {
  const nf = new NotFoundError(ref);
  assert.equal(FlotillaError.from(nf), nf);
  const fst = Object.assign(new Error("Unsupported Media Type: text/plain"), { code: "FST_ERR_CTP_INVALID_MEDIA_TYPE", statusCode: 415 });
  const a = FlotillaError.from(fst);
  assert.equal(a.reason, "UnsupportedMediaType");
  assert.equal(a.httpStatus, 415);
  assert.equal(a.message, "Unsupported Media Type: text/plain");
  const secret = new Error("relation \"objects\" does not exist at 10.0.0.5");
  const b = FlotillaError.from(secret);
  assert.equal(b.reason, "InternalError");
  assert.equal(b.httpStatus, 500);
  assert.doesNotMatch(b.message, /10\.0\.0\.5|objects/);
  assert.equal(b.cause, secret);
  // a 5xx or a non-fastify code is not taken at its word
  assert.equal(FlotillaError.from(Object.assign(new Error("x"), { code: "FST_X", statusCode: 502 })).reason, "InternalError");
  assert.equal(FlotillaError.from(Object.assign(new Error("x"), { code: "EOTHER", statusCode: 404 })).reason, "InternalError");
  assert.equal(FlotillaError.from("thrown string").reason, "InternalError");
  assert.equal(FlotillaError.from(undefined).reason, "InternalError");
});

test("an HTTP status names its reason (409 is a conflict, unknown 4xx a bad request)", () => {
  const cases: [number, string][] = [
    [400, "BadRequest"],
    [404, "NotFound"],
    [409, "Conflict"],
    [413, "RequestEntityTooLarge"],
    [415, "UnsupportedMediaType"],
    [418, "BadRequest"],
    [503, "ServiceUnavailable"],
    [599, "InternalError"],
  ];
  for (const [code, reason] of cases) assert.equal(reasonForHttp(code), reason, String(code));
});
