import { test } from "node:test";
import assert from "node:assert/strict";
import type { ObjectMeta } from "@flotilla/api";
import { claimOf, claimedById, hasClaim, withClaimMeta, withoutClaimMeta, type Claim } from "./claim.js";

const pp: Claim = { kind: "PropagationPolicy", namespace: "default", name: "nginx-propagation", id: "pp-id" };
const cpp: Claim = { kind: "ClusterPropagationPolicy", namespace: "", name: "all", id: "cpp-id" };

test("claims are marked, read back and removed with upstream's keys", () => {
  const claimed = withClaimMeta({ name: "nginx", labels: { app: "nginx" } }, pp);
  assert.deepEqual(claimed.labels, { app: "nginx", "propagationpolicy.karmada.io/permanent-id": "pp-id" }, "a PP claim is the id label");
  assert.deepEqual(claimed.annotations, { "propagationpolicy.karmada.io/namespace": "default", "propagationpolicy.karmada.io/name": "nginx-propagation" }, "and the namespace and name annotations");
  assert.deepEqual(claimOf(claimed), pp, "the claim reads back");
  assert.ok(hasClaim(claimed, pp), "and is recognised as this policy's");
  assert.ok(!hasClaim(claimed, { ...pp, id: "other" }), "but not as another policy's");
  assert.deepEqual(withoutClaimMeta(claimed, "PropagationPolicy"), { name: "nginx", labels: { app: "nginx" } }, "removing it restores the object");

  const byCpp = withClaimMeta({ name: "nginx" }, cpp);
  assert.deepEqual(byCpp.labels, { "clusterpropagationpolicy.karmada.io/permanent-id": "cpp-id" }, "a CPP claim is its id label");
  assert.deepEqual(byCpp.annotations, { "clusterpropagationpolicy.karmada.io/name": "all" }, "and its name annotation");
  assert.deepEqual(claimOf(byCpp), cpp);

  const taken = withClaimMeta(byCpp, pp);
  assert.deepEqual(claimOf(taken), pp, "a PP claim is read before a CPP claim");
  assert.equal(taken.labels?.["clusterpropagationpolicy.karmada.io/permanent-id"], undefined, "a PP claim drops the CPP claim");
  assert.ok(!hasClaim({ ...withClaimMeta({}, pp), labels: { ...withClaimMeta({}, pp).labels, "clusterpropagationpolicy.karmada.io/permanent-id": "x" } }, pp), "a PP claim next to a CPP claim is not complete");
});

test("a claim is incomplete without its annotations, and cleanup is only for its own policy", () => {
  const labelOnly: ObjectMeta = { labels: { "propagationpolicy.karmada.io/permanent-id": "pp-id" } };
  assert.equal(claimOf(labelOnly), undefined, "the id label alone is no claim");
  assert.ok(claimedById(labelOnly, "PropagationPolicy", "pp-id"), "the same id may clean up");
  assert.ok(!claimedById(labelOnly, "PropagationPolicy", "new-id"), "a policy re-created under the same name has another id and may not");
  assert.ok(!claimedById(labelOnly, "ClusterPropagationPolicy", "pp-id"), "nor may a policy of the other kind");
});
