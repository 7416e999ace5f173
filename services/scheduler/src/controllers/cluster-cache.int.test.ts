import { test } from "node:test";
import assert from "node:assert/strict";
import { GK, type Cluster } from "@flotilla/api";
import { createLogger } from "@flotilla/log";
import { ObjectStore } from "@flotilla/store";
import { eventually, freshDatabase } from "@flotilla/testkit";
import { ClusterCache } from "./cluster-cache.js";

const log = createLogger({ name: "cluster-cache-test", level: "silent" });
const cluster = (name: string, labels: Record<string, string> = {}): Cluster => ({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name, labels }, spec: { apiEndpoint: `https://${name}.example:6443` } });

test("the snapshot follows the Clusters through the watch, without a refresh; a wake-up's refresh still reports the change it brings", async () => {
  const db = await freshDatabase();
  const store = new ObjectStore(db.sql);
  const cache = new ClusterCache(store, { log });
  try {
    await store.create(cluster("m1"));
    await cache.start();
    const first = cache.snapshot();
    assert.deepEqual(first.map((c) => c.metadata.name), ["m1"]);
    assert.equal(cache.snapshot(), first, "the snapshot keeps its identity while nothing changes");
    assert.ok(Object.isFrozen(first[0]));

    // a new cluster, a label change, a deletion: each reaches the snapshot through the watch
    const m2 = await store.create(cluster("m2"));
    await eventually(() => cache.get("m2")?.metadata.resourceVersion === m2.metadata.resourceVersion, { timeoutMs: 5000, message: "the new cluster reaches the cache" });
    assert.deepEqual(cache.snapshot().map((c) => c.metadata.name), ["m1", "m2"]);
    const m1 = await store.mutate<Cluster>({ gk: GK.cluster, name: "m1" }, (c) => ((c.metadata.labels = { zone: "a" }), c));
    await eventually(() => cache.get("m1")?.metadata.resourceVersion === m1!.metadata.resourceVersion, { timeoutMs: 5000, message: "the label change reaches the cache" });
    assert.deepEqual(cache.snapshot().find((c) => c.metadata.name === "m1")?.metadata.labels, { zone: "a" });
    await store.delete({ gk: GK.cluster, name: "m2" });
    await eventually(() => !cache.get("m2") && cache.snapshot().length === 1, { timeoutMs: 5000, message: "the deletion reaches the cache" });

    // the watch brought them first: the wake-ups' refreshes still report each change since the last report
    const added = await cache.refresh("m2");
    assert.equal(added, undefined, "m2 came and went between two reports: nothing to report");
    const labelled = await cache.refresh("m1");
    assert.equal(labelled?.before?.metadata.labels?.zone, undefined);
    assert.equal(labelled?.after?.metadata.labels?.zone, "a");
    assert.equal(await cache.refresh("m1"), undefined, "reported once");

    // a refresh reads the cluster itself: it does not wait for the watch
    const m3 = await store.create(cluster("m3"));
    const ch = await cache.refresh("m3");
    assert.equal(ch?.after?.metadata.resourceVersion, m3.metadata.resourceVersion);
    assert.equal(cache.get("m3")?.metadata.resourceVersion, m3.metadata.resourceVersion);
    await store.delete({ gk: GK.cluster, name: "m3" });
    const gone = await cache.refresh("m3");
    assert.ok(gone && gone.before && !gone.after);
    assert.equal(cache.get("m3"), undefined);

    // refreshAll lists everything afresh and reports what the last reports had not
    await store.create(cluster("m4"));
    const all = await cache.refreshAll();
    assert.deepEqual(all.map((c) => [c.name, !!c.before, !!c.after]), [["m4", false, true]]);
    assert.deepEqual(cache.snapshot().map((c) => c.metadata.name), ["m1", "m4"]);
    assert.deepEqual((await cache.snapshotSince(performance.now())).map((c) => c.metadata.name), ["m1", "m4"]);
  } finally {
    await cache.stop();
    await db.drop();
  }
});
