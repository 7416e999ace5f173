import { test } from "node:test";
import assert from "node:assert/strict";
import { apiVersionFor, groupKindOf, splitGroupKind, streamSubject, subjectFor } from "./subjects.js";
import { wakeUpsOf } from "./consumer.js";
import { groupRows, toWakeUp, wakeUpsPayload } from "./outbox.js";
import { retryDelay } from "./log.js";

test("subjectFor", async (t) => {
  const cases: [string, string, string | undefined, string][] = [
    ["a core kind goes under core", "/ConfigMap", undefined, "flotilla.obj.core.ConfigMap"],
    ["a group kind keeps its group", "apps/Deployment", undefined, "flotilla.obj.apps.Deployment"],
    ["dots in the group become subject tokens", "work.karmada.io/ResourceBinding", undefined, "flotilla.obj.work.karmada.io.ResourceBinding"],
    ["the prefix is configurable", "cluster.karmada.io/Cluster", "t_1", "t_1.obj.cluster.karmada.io.Cluster"],
  ];
  for (const [name, gk, prefix, want] of cases) await t.test(name, () => assert.equal(subjectFor(gk, prefix), want));
  await t.test("a kind that would break the subject is refused", () => {
    assert.throws(() => subjectFor("apps/Deploy ment"));
    assert.throws(() => subjectFor("apps/*"));
    assert.throws(() => subjectFor("apps/"));
    assert.throws(() => subjectFor("a..b/Kind"));
  });
  await t.test("every subject is inside the stream's filter", () => {
    assert.equal(streamSubject("p"), "p.obj.>");
  });
});

test("group/kind parsing", async (t) => {
  const cases: [string, string, { group: string; kind: string }][] = [
    ["a core kind has an empty group", "/ConfigMap", { group: "", kind: "ConfigMap" }],
    ["a dotted group stays whole", "policy.karmada.io/PropagationPolicy", { group: "policy.karmada.io", kind: "PropagationPolicy" }],
  ];
  for (const [name, gk, want] of cases) await t.test(name, () => assert.deepEqual(splitGroupKind(gk), want));
});

test("apiVersionFor", async (t) => {
  const cases: [string, string, string | null, string][] = [
    ["the object's own apiVersion wins", "apps/Deployment", "apps/v1beta2", "apps/v1beta2"],
    ["a registered kind without one gets its served version", "work.karmada.io/ResourceBinding", null, "work.karmada.io/v1alpha2"],
    ["a core kind without one gets v1", "/Widget", null, "v1"],
    ["an unknown group kind gets <group>/v1", "example.com/Widget", null, "example.com/v1"],
  ];
  for (const [name, gk, own, want] of cases) {
    await t.test(name, () => {
      const v = apiVersionFor(gk, own);
      assert.equal(v, want);
      assert.equal(groupKindOf({ apiVersion: v, kind: splitGroupKind(gk).kind }), gk, "the group/kind round-trips");
    });
  }
});

test("an outbox row becomes a wake-up without the object body", () => {
  const w = toWakeUp({ id: "42", rv: "1007", gk: "apps/Deployment", namespace: "web", name: "nginx", uid: "0b7c6c56-7d2e-4f55-9d7e-8f1d3c1b2a10", type: "MODIFIED", api_version: "apps/v1", generation: null, index_keys: null });
  assert.deepEqual(w, { id: "42", apiVersion: "apps/v1", kind: "Deployment", namespace: "web", name: "nginx", uid: "0b7c6c56-7d2e-4f55-9d7e-8f1d3c1b2a10", resourceVersion: "1007", type: "MODIFIED" });
});

test("a wake-up carries the object's generation and index entries as hints when the row has them", () => {
  const w = toWakeUp({ id: "43", rv: "1008", gk: "work.karmada.io/ResourceBinding", namespace: "web", name: "nginx-deployment", uid: "0b7c6c56-7d2e-4f55-9d7e-8f1d3c1b2a10", type: "MODIFIED", api_version: "work.karmada.io/v1alpha2", generation: "3", index_keys: ["cluster:member1", "evicting"] });
  assert.equal(w.generation, "3");
  assert.deepEqual(w.indexKeys, ["cluster:member1", "evicting"]);
});

test("rows of one kind share a message, at most max to one, each kind's rows in id order", () => {
  const row = (id: string, gk: string) => ({ id, rv: id, gk, namespace: "ns", name: `o${id}`, uid: "0b7c6c56-7d2e-4f55-9d7e-8f1d3c1b2a10", type: "ADDED", api_version: null, generation: null, index_keys: null });
  const groups = groupRows([row("1", "apps/Deployment"), row("2", "/ConfigMap"), row("3", "apps/Deployment"), row("4", "apps/Deployment"), row("5", "/ConfigMap")], "flotilla", 2);
  assert.deepEqual(
    groups.map((g) => [g.subject, g.rows.map((r) => r.id)]),
    [
      ["flotilla.obj.apps.Deployment", ["1", "3"]],
      ["flotilla.obj.core.ConfigMap", ["2", "5"]],
      ["flotilla.obj.apps.Deployment", ["4"]],
    ],
  );
  assert.deepEqual(wakeUpsOf(JSON.parse(new TextDecoder().decode(wakeUpsPayload(groups[0]!.rows)))).map((w) => w.id), ["1", "3"]);
});

test("retryDelay", async (t) => {
  const cases: [string, number, number][] = [
    ["no failure means no delay", 0, 0],
    ["the first failure waits the base", 1, 100],
    ["each further failure doubles it", 4, 800],
    ["it never passes the cap", 10, 5000],
    ["a huge count stays at the cap", 10_000, 5000],
  ];
  for (const [name, n, want] of cases) await t.test(name, () => assert.equal(retryDelay(n, 100, 5000), want));
});
