import { test } from "node:test";
import assert from "node:assert/strict";
import { createPublicKey, generateKeyPairSync } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import type { KubeObject } from "@flotilla/api";
import type { ObjectStore } from "@flotilla/store";
import { ESTIMATOR_METHODS, GATEWAY_IDENTITY, authorizedHandlers, selfIssuedToken, type CallAccess } from "./grpc.js";
import { AUTHENTICATED_GROUP, type Attributes, type UserInfo } from "./rbac.js";
import { ServiceAccountTokens } from "./service-account-tokens.js";

/** The store's upsert and get over a map: objects get a uid when created. */
function memoryStore() {
  const objects = new Map<string, KubeObject>();
  const key = (r: { gk: string; namespace?: string; name: string }) => `${r.gk}|${r.namespace ?? ""}|${r.name}`;
  let uids = 0;
  const store = {
    objects,
    writes: 0,
    async get(r: { gk: string; namespace?: string; name: string }) {
      return objects.get(key(r));
    },
    async upsert(r: { gk: string; namespace?: string; name: string }, decide: (cur: KubeObject | undefined) => KubeObject | undefined) {
      const cur = objects.get(key(r));
      const next = decide(cur && structuredClone(cur));
      if (!next) return { obj: cur, written: undefined };
      store.writes++;
      const obj = { ...next, metadata: { ...next.metadata, uid: cur?.metadata.uid ?? `uid-${++uids}` } };
      objects.set(key(r), obj);
      return { obj, written: cur ? "updated" : "created" };
    },
  };
  return store;
}

const ISSUER = "https://flotilla.local";
const POLICY = { audiences: [ISSUER], defaultSeconds: 3600, maxSeconds: 86_400 };

/** Calls a wrapped unary handler with `authorization` and returns the error or the answer. */
function call(handlers: grpc.UntypedServiceImplementation, method: string, authorization?: string): Promise<grpc.ServiceError | unknown> {
  const md = new grpc.Metadata();
  if (authorization) md.set("authorization", authorization);
  return new Promise((resolve) => (handlers[method] as grpc.handleUnaryCall<unknown, unknown>)({ metadata: md, request: {} } as never, (e, r) => resolve(e ?? r)));
}

const access = (users: Record<string, UserInfo>, allow: (u: UserInfo, a: Attributes) => boolean): CallAccess => ({
  authenticator: { authenticate: async (h) => (h ? users[h.replace(/^Bearer /, "")] : undefined) },
  authorizer: { decide: (u, a) => ({ allowed: allow(u, a), reason: "" }) },
});

test("a call is authenticated before anything else, then authorized as its method's RBAC request; an unlisted method is closed", async () => {
  const ran: string[] = [];
  const handlers = authorizedHandlers(
    access({ good: { name: "system:serviceaccount:flotilla-system:scheduler", groups: [AUTHENTICATED_GROUP] }, other: { name: "eve", groups: [AUTHENTICATED_GROUP] } }, (u, a) => u.name.endsWith(":scheduler") && a.resourceRequest && a.resource === "maxavailablereplicas"),
    { maxAvailableReplicas: (_c: unknown, cb: grpc.sendUnaryData<unknown>) => (ran.push("maxAvailableReplicas"), cb(null, "ok")), debug: (_c: unknown, cb: grpc.sendUnaryData<unknown>) => (ran.push("debug"), cb(null, "ok")) },
    ESTIMATOR_METHODS,
  );
  const anonymous = (await call(handlers, "maxAvailableReplicas")) as grpc.ServiceError;
  assert.equal(anonymous.code, grpc.status.UNAUTHENTICATED);
  assert.equal(JSON.parse(String(anonymous.metadata.get("k8s-status")[0])).reason, "Unauthorized");
  assert.equal(((await call(handlers, "maxAvailableReplicas", "Bearer nobody")) as grpc.ServiceError).code, grpc.status.UNAUTHENTICATED);
  const denied = (await call(handlers, "maxAvailableReplicas", "Bearer other")) as grpc.ServiceError;
  assert.equal(denied.code, grpc.status.PERMISSION_DENIED);
  assert.match(denied.details, /User "eve" cannot create resource "maxavailablereplicas" in API group "estimator.flotilla.io"/);
  assert.equal(((await call(handlers, "debug", "Bearer good")) as grpc.ServiceError).code, grpc.status.PERMISSION_DENIED);
  assert.deepEqual(ran, []);
  assert.equal(await call(handlers, "maxAvailableReplicas", "Bearer good"), "ok");
  assert.deepEqual(ran, ["maxAvailableReplicas"]);
});

test("a service's own token: its account, role and binding written once, the token kept until four fifths of its life, then issued again", async () => {
  const store = memoryStore();
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const tokens = await ServiceAccountTokens.fromKeys(store as unknown as ObjectStore, [privateKey], ISSUER, POLICY);
  let now = Date.now();
  const token = selfIssuedToken({ store: store as unknown as ObjectStore, tokens, identity: GATEWAY_IDENTITY, lifetimeSeconds: 1000, now: () => now });
  const [a, b] = await Promise.all([token(), token()]);
  assert.equal(a, b, "one issue for calls at once");
  const kinds = [...store.objects.values()].map((o) => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`).sort();
  assert.deepEqual(kinds, ["ClusterRole system:flotilla:gateway", "ClusterRoleBinding system:flotilla:gateway", "Namespace flotilla-system", "ServiceAccount flotilla-system/gateway"]);
  const user = await tokens.authenticate(`Bearer ${a}`);
  assert.equal(user?.name, "system:serviceaccount:flotilla-system:gateway");
  const writes = store.writes;
  now += 799_000;
  assert.equal(await token(), a, "kept within four fifths of its life");
  now += 2_000;
  const c = await token();
  assert.notEqual(c, a, "issued again after");
  assert.equal(store.writes, writes, "an unchanged identity is not written again");
});

test("service account keys given by their public half verify tokens and never sign", async () => {
  const store = memoryStore();
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const signer = await ServiceAccountTokens.fromKeys(store as unknown as ObjectStore, [privateKey], ISSUER, POLICY);
  const verifier = await ServiceAccountTokens.fromKeys(store as unknown as ObjectStore, [createPublicKey(privateKey)], ISSUER, POLICY);
  assert.equal(signer.canIssue, true);
  assert.equal(verifier.canIssue, false);
  const { obj } = await store.upsert({ gk: "/ServiceAccount", namespace: "flotilla-system", name: "scheduler" }, () => ({ apiVersion: "v1", kind: "ServiceAccount", metadata: { namespace: "flotilla-system", name: "scheduler" } }));
  const { token } = await signer.issue({ namespace: "flotilla-system", name: "scheduler", uid: obj!.metadata.uid! }, { audiences: [ISSUER], expirationSeconds: 600 });
  assert.equal((await verifier.authenticate(`Bearer ${token}`))?.name, "system:serviceaccount:flotilla-system:scheduler");
  await assert.rejects(() => verifier.issue({ namespace: "flotilla-system", name: "scheduler", uid: "x" }, { audiences: [ISSUER], expirationSeconds: 600 }), /public key/);
});
