import { test } from "node:test";
import assert from "node:assert/strict";
import { InvalidError } from "@flotilla/api";
import { claimedServiceAccount, serviceAccountClaims, serviceAccountUserInfo, tokenRequestSpec } from "./serviceaccounts.js";

const policy = { audiences: ["https://flotilla.local"], defaultSeconds: 3600, maxSeconds: 86400 };

test("tokenRequestSpec: defaults, bounds and every bad field named", () => {
  const ok: [unknown, { audiences: string[]; expirationSeconds: number }][] = [
    [undefined, { audiences: ["https://flotilla.local"], expirationSeconds: 3600 }],
    [{}, { audiences: ["https://flotilla.local"], expirationSeconds: 3600 }],
    [{ spec: null }, { audiences: ["https://flotilla.local"], expirationSeconds: 3600 }],
    [{ spec: { audiences: [] } }, { audiences: ["https://flotilla.local"], expirationSeconds: 3600 }],
    [{ spec: { audiences: ["a", "b", "a"], expirationSeconds: 600 } }, { audiences: ["a", "b"], expirationSeconds: 600 }],
    // longer than allowed: cut to the maximum, as kube-apiserver does
    [{ spec: { expirationSeconds: 10 * 86400 } }, { audiences: ["https://flotilla.local"], expirationSeconds: 86400 }],
  ];
  for (const [body, want] of ok) assert.deepEqual(tokenRequestSpec(body, "robot", policy), want, JSON.stringify(body));

  const bad: [unknown, string[]][] = [
    [{ spec: "x" }, ["spec"]],
    [{ spec: { audiences: "a" } }, ["spec.audiences"]],
    [{ spec: { audiences: ["a", 1, ""] } }, ["spec.audiences[1]", "spec.audiences[2]"]],
    [{ spec: { expirationSeconds: 599 } }, ["spec.expirationSeconds"]],
    [{ spec: { expirationSeconds: "3600" } }, ["spec.expirationSeconds"]],
    [{ spec: { expirationSeconds: 3600.5 } }, ["spec.expirationSeconds"]],
    [{ spec: { expirationSeconds: 2 ** 33 } }, ["spec.expirationSeconds"]],
    [{ spec: { boundObjectRef: { kind: "Pod", name: "p" } } }, ["spec.boundObjectRef"]],
    [{ spec: { audiences: 3, expirationSeconds: 1 } }, ["spec.audiences", "spec.expirationSeconds"]],
  ];
  for (const [body, fields] of bad) {
    assert.throws(
      () => tokenRequestSpec(body, "robot", policy),
      (e: unknown) => e instanceof InvalidError && JSON.stringify(e.causes.map((c) => c.field)) === JSON.stringify(fields) && e.ref.kind === "TokenRequest" && e.ref.name === "robot",
      JSON.stringify(body),
    );
  }
});

test("claimedServiceAccount: only claims whose subject and private claim agree name an account", () => {
  const good = serviceAccountClaims("team-a", "robot", "u-1");
  assert.deepEqual(claimedServiceAccount({ ...good }), { namespace: "team-a", name: "robot", uid: "u-1" });
  const cases: [string, Record<string, unknown>][] = [
    ["no private claim", { sub: good.sub }],
    ["subject of another account", { ...good, sub: "system:serviceaccount:team-a:other" }],
    ["subject of a user", { ...good, sub: "admin" }],
    ["no uid", { sub: good.sub, "kubernetes.io": { namespace: "team-a", serviceaccount: { name: "robot" } } }],
    ["uid not a string", { sub: good.sub, "kubernetes.io": { namespace: "team-a", serviceaccount: { name: "robot", uid: 1 } } }],
    ["private claim not an object", { sub: good.sub, "kubernetes.io": "team-a" }],
    ["empty namespace", { sub: "system:serviceaccount::robot", "kubernetes.io": { namespace: "", serviceaccount: { name: "robot", uid: "u" } } }],
  ];
  for (const [what, payload] of cases) assert.equal(claimedServiceAccount(payload), undefined, what);
});

test("serviceAccountUserInfo: Kubernetes' user name and groups of a service account", () => {
  assert.deepEqual(serviceAccountUserInfo({ namespace: "team-a", name: "robot", uid: "u-1" }), {
    name: "system:serviceaccount:team-a:robot",
    uid: "u-1",
    groups: ["system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated"],
  });
});

test("decodeTokenRequest: what kubectl create token sends in protobuf (audiences, expirationSeconds as a varint, boundObjectRef)", async () => {
  const { decodeTokenRequest } = await import("./protobuf.js");
  const len = (tag: number, b: Buffer) => Buffer.concat([Buffer.from([tag, b.length]), b]);
  const envelope = (spec: Buffer) =>
    Buffer.concat([
      Buffer.from([0x6b, 0x38, 0x73, 0x00]),
      len(0x0a, Buffer.concat([len(0x0a, Buffer.from("authentication.k8s.io/v1")), len(0x12, Buffer.from("TokenRequest"))])),
      len(0x12, len(0x12, spec)),
    ]);
  // spec { audiences: ["vault", "api"], expirationSeconds: 1200 (varint b0 09) }
  const spec = Buffer.concat([len(0x0a, Buffer.from("vault")), len(0x0a, Buffer.from("api")), Buffer.from([0x20, 0xb0, 0x09])]);
  assert.deepEqual(decodeTokenRequest(envelope(spec)), { spec: { audiences: ["vault", "api"], expirationSeconds: 1200 } });
  const bound = Buffer.concat([len(0x1a, Buffer.concat([len(0x0a, Buffer.from("Pod")), len(0x1a, Buffer.from("p"))]))]);
  assert.deepEqual(decodeTokenRequest(envelope(bound)), { spec: { boundObjectRef: { kind: "Pod", name: "p" } } });
  assert.deepEqual(decodeTokenRequest(envelope(Buffer.alloc(0))), { spec: {} });
  assert.throws(() => decodeTokenRequest(Buffer.from("nope")), /envelope/);
});
