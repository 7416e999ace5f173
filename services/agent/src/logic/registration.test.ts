import { test } from "node:test";
import assert from "node:assert/strict";
import type { Cluster } from "@flotilla/api";
import { registration } from "./registration.js";

const cluster = (spec: Record<string, unknown>): Cluster => ({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "member3", resourceVersion: "7" }, spec } as Cluster);

const cases: { name: string; existing: Cluster | undefined; want: string; spec?: Record<string, unknown> }[] = [
  { name: "a missing cluster is created in Pull mode", existing: undefined, want: "create", spec: { syncMode: "Pull" } },
  { name: "a Push cluster of the same name is switched to Pull, its other fields kept", existing: cluster({ syncMode: "Push", region: "eu", taints: [{ key: "k", effect: "NoSchedule" }] }), want: "update", spec: { syncMode: "Pull", region: "eu", taints: [{ key: "k", effect: "NoSchedule" }] } },
  { name: "a cluster without a syncMode is set to Pull", existing: cluster({}), want: "update", spec: { syncMode: "Pull" } },
  { name: "a cluster already in Pull mode is left alone", existing: cluster({ syncMode: "Pull", region: "eu" }), want: "none" },
];

for (const c of cases) {
  test(c.name, () => {
    const r = registration("member3", c.existing);
    assert.equal(r.action, c.want);
    if (r.action !== "none") {
      assert.deepEqual(r.cluster.spec, c.spec);
      assert.equal(r.cluster.metadata.name, "member3");
      if (c.existing) assert.equal(r.cluster.metadata.resourceVersion, "7", "an update carries the version read");
    }
  });
}
