import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@flotilla/api";
import { cacheable } from "./informer.js";

const deployment = (metadata: Record<string, unknown>): KubeObject => ({ apiVersion: "apps/v1", kind: "Deployment", metadata, spec: { replicas: 2 }, status: { readyReplicas: 2 } }) as KubeObject;

test("the cache keeps a member object without its managedFields, everything else as it came", () => {
  const listed = deployment({ name: "web", namespace: "default", resourceVersion: "7", labels: { app: "web" }, managedFields: [{ manager: "flotilla", operation: "Update", fieldsV1: { "f:spec": {} } }] });
  const kept = cacheable(listed);
  assert.deepEqual(kept, deployment({ name: "web", namespace: "default", resourceVersion: "7", labels: { app: "web" } }));
  assert.ok("managedFields" in listed.metadata, "the object given is not changed");
});

test("an object without managedFields is kept as it is, not copied", () => {
  const o = deployment({ name: "web", namespace: "default", resourceVersion: "7" });
  assert.equal(cacheable(o), o);
});
