import { test } from "node:test";
import assert from "node:assert/strict";
import { ObjectStore } from "@flotilla/store";
import { freshDatabase } from "@flotilla/testkit";
import { buildGateway } from "../app.js";
import { bearer, testGatewayDeps } from "../access.test-support.js";

test("stopping the gateway ends its open REST watches at once (clients watch again elsewhere) instead of waiting for them", async () => {
  const db = await freshDatabase();
  try {
    const gw = buildGateway(testGatewayDeps(new ObjectStore(db.sql)));
    const { url } = await gw.start({ host: "127.0.0.1", port: 0 });
    const watches = await Promise.all(
      ["/api/v1/namespaces/default/configmaps?watch=true", "/apis/apps/v1/deployments?watch=1", "/apis/cluster.karmada.io/v1alpha1/clusters?watch=true&timeoutSeconds=600"].map(async (p) => {
        const r = await fetch(`${url}${p}`, { headers: bearer() });
        assert.equal(r.status, 200, p);
        return { ended: r.text() }; // resolves when the server ends the stream
      }),
    );
    const t0 = Date.now();
    await gw.stop();
    const ended = await Promise.race([Promise.all(watches.map((w) => w.ended)).then(() => true), new Promise((r) => setTimeout(() => r(false), 5000))]);
    assert.equal(ended, true, "every watch stream ended");
    assert.ok(Date.now() - t0 < 3000, `stop() took ${Date.now() - t0} ms`);
  } finally {
    await db.drop();
  }
});
