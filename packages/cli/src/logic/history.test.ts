import { test } from "node:test";
import assert from "node:assert/strict";
import { historyTable, placementText, type PlacementChangeList } from "./history.js";

test("placementText", async (t) => {
  const cases: [string, Parameters<typeof placementText>[0], string][] = [
    ["no cluster is a dash", [], "-"],
    ["absent is a dash", undefined, "-"],
    ["clusters with replicas as name:replicas", [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }], "member1:1,member2:2"],
    ["a cluster without replicas by its name", [{ name: "member3" }], "member3"],
  ];
  for (const [name, ts, want] of cases) await t.test(name, () => assert.equal(placementText(ts), want));
});

const list: PlacementChangeList = {
  binding: { kind: "ResourceBinding", namespace: "default", name: "nginx-deployment" },
  items: [
    { time: "2026-01-01T00:00:00.123456Z", trigger: "placementChanged", reason: "Success", message: "Binding has been scheduled successfully.", actor: { kind: "Service", name: "scheduler" }, from: [], to: [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }] },
    { time: "2026-01-01T00:01:00.000001Z", trigger: "eviction", reason: "TaintUntolerated", producer: "TaintManager", message: "taint not tolerated", actor: { kind: "Service", name: "taint-manager" }, from: [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }], to: [{ name: "member2", replicas: 2 }] },
    { time: "2026-01-01T00:02:00Z", trigger: "update", from: [{ name: "member2", replicas: 2 }], to: [{ name: "member3", replicas: 2 }] },
  ],
};

test("historyTable prints one row per change, oldest first, times to the second", () => {
  assert.equal(
    historyTable(list),
    [
      "ResourceBinding default/nginx-deployment: 3 placement change(s)",
      "TIME                   TRIGGER            REASON             FROM                  TO                    BY",
      "2026-01-01T00:00:00Z   placementChanged   Success            -                     member1:1,member2:2   service/scheduler",
      "2026-01-01T00:01:00Z   eviction           TaintUntolerated   member1:1,member2:2   member2:2             service/taint-manager",
      "2026-01-01T00:02:00Z   update             -                  member2:2             member3:2             -",
      "",
    ].join("\n"),
  );
});

test("historyTable -o wide adds the producer and the message", () => {
  const lines = historyTable(list, { wide: true }).split("\n");
  assert.match(lines[1]!, /BY\s+PRODUCER\s+MESSAGE$/);
  assert.match(lines[3]!, /service\/taint-manager\s+TaintManager\s+taint not tolerated$/);
  assert.match(lines[4]!, /-\s+-\s+-$/);
});

test("historyTable of a cluster-scoped binding without changes is the heading alone", () => {
  assert.equal(historyTable({ binding: { kind: "ClusterResourceBinding", name: "x" }, items: [] }), "ClusterResourceBinding x: 0 placement change(s)\n");
});
