// The table runner of the validation tests: each case mutates a valid object and names the field errors it expects.
import assert from "node:assert/strict";
import { InvalidError, validateObject, type ResourceType } from "@flotilla/api";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** [test name, resource type, a valid object, the change, the expected [field, reason] pairs (none: still valid)]. */
export type Case = [name: string, rt: ResourceType, base: () => Json, mutate: (o: Json) => void, want: Array<[string, string]>];

/**
 * Runs one case: validateObject accepts the changed object, or rejects it with exactly `want`.
 * Each test file declares its own tests (`for (const c of cases) test(c[0], () => checkCase(c))`):
 * the test runner names a test's file after where test() is called.
 */
export function checkCase([, rt, base, mutate, want]: Case): void {
  const o = base();
  mutate(o);
  if (want.length === 0) {
    assert.doesNotThrow(() => validateObject(rt, o));
    return;
  }
  assert.throws(
    () => validateObject(rt, o),
    (e: unknown) => {
      assert.ok(e instanceof InvalidError, String(e));
      assert.deepEqual(e.causes.map((c) => [c.field, c.reason]), want);
      return true;
    },
  );
}

/** A valid PropagationPolicy (nginx to member1). */
export const pp = (): Json => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { name: "nginx-propagation", namespace: "default" },
  spec: {
    resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }],
    placement: { clusterAffinity: { clusterNames: ["member1"] } },
  },
});

/** A valid ClusterPropagationPolicy. */
export const cpp = (): Json => ({ ...pp(), kind: "ClusterPropagationPolicy", metadata: { name: "all-nginx" } });
