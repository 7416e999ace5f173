// The blast-radius what-if end to end: the gateway's REST route, gRPC to this scheduler (the
// service as main.ts builds it, on its own database and stream), the same schedule() the
// controller runs against the stored fleet, nothing written.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { AnyResourceBinding, Cluster } from "@flotilla/api";
import { GATEWAY_IDENTITY } from "@flotilla/auth";
import { buildGateway, type Gateway } from "../../../services/gateway/src/app.js";
import { TOKENS, bearer, testGatewayDeps } from "../../../services/gateway/src/access.test-support.js";
import { binding, cluster, placements } from "../../../services/scheduler/src/fixtures.test-support.js";
import { scheduledCondition, startHarness, targets, type Harness } from "../../../services/scheduler/src/harness.test-support.js";

const PATH = "/apis/scheduling.flotilla.io/v1alpha1/failuresimulations";
const NGINX = "default/nginx-deployment";
const SOLO = "default/solo-deployment";
const STICKY = "default/sticky-deployment";

type Outcome = { kind: string; namespace?: string; name: string; result: string; after: Array<{ name: string; replicas: number }>; evictions: Array<Record<string, unknown>>; tolerated: string[]; message: string };

describe("failure simulations through the gateway against the scheduler", () => {
  let h: Harness;
  let gw: Gateway;
  const versions = new Map<string, string>();
  let clusterVersions: string[] = [];
  const scheduled = (b: AnyResourceBinding) => scheduledCondition(b)?.status === "True" && b.status?.schedulerObservedGeneration === b.metadata.generation;

  before(async () => {
    h = await startHarness();
    for (const n of ["member1", "member2", "member3"]) await h.createCluster(cluster(n));
    // the seed's nginx: Divided by static weight 1:2 over member1 and member2
    await h.createBinding(binding("nginx", { replicas: 3 }));
    // only member1 will do
    await h.createBinding(binding("solo", { replicas: 2, placement: placements.duplicated(["member1"]) }));
    // tolerates an unreachable member for good
    const sticky = binding("sticky", { replicas: 2, placement: placements.duplicated(["member1", "member2"]) });
    sticky.spec!.placement!.clusterTolerations = [{ key: "cluster.karmada.io/unreachable", operator: "Exists", effect: "NoExecute" }];
    await h.createBinding(sticky);
    for (const k of [NGINX, SOLO, STICKY]) versions.set(k, (await h.until(k, scheduled)).metadata.resourceVersion!);
    clusterVersions = (await h.store.list<Cluster>("cluster.karmada.io/Cluster")).items.map((c) => c.metadata.resourceVersion!);
    gw = buildGateway({ ...testGatewayDeps(h.store), scheduler: { address: h.grpcAddress, credentials: h.grpc.caller(h.store, GATEWAY_IDENTITY) } });
    await gw.http.ready();
  });
  after(async () => {
    await gw?.stop();
    await h?.close();
  });
  const post = (body: unknown, auth: Record<string, string> = bearer()) => gw.http.inject({ method: "POST", url: PATH, payload: JSON.stringify(body), headers: { "content-type": "application/json", ...auth } });
  const failing = (...clusters: unknown[]) => ({ apiVersion: "scheduling.flotilla.io/v1alpha1", kind: "FailureSimulation", metadata: { name: "what-if" }, spec: { clusters } });

  test("the seed's nginx with member1 failing would go to member2:3; what cannot move and what tolerates it are said; nothing is written", async () => {
    assert.deepEqual(targets(await h.get(NGINX)), ["member1:1", "member2:2"]);
    const res = await post(failing("member1"));
    assert.equal(res.statusCode, 200, res.body);
    const out = res.json();
    assert.equal(out.kind, "FailureSimulation");
    assert.equal(out.metadata.name, "what-if");
    assert.deepEqual(out.status.failedClusters, ["member1"]);
    const byName = new Map((out.status.bindings as Outcome[]).map((o) => [o.name, o]));
    assert.deepEqual(
      (out.status.bindings as Outcome[]).map((o) => [o.name, o.result]),
      [
        ["nginx-deployment", "Rescheduled"],
        ["solo-deployment", "NoClusterFit"],
        ["sticky-deployment", "Tolerated"],
      ],
    );
    const nginx = byName.get("nginx-deployment")!;
    assert.deepEqual(nginx.after, [{ name: "member2", replicas: 3 }]);
    assert.deepEqual(nginx.evictions, [{ cluster: "member1", replicas: 1, taint: "cluster.karmada.io/unreachable:NoExecute", purgeMode: "Gracefully" }]);
    const solo = byName.get("solo-deployment")!;
    assert.deepEqual(solo.after, []);
    assert.match(solo.message, /^no cluster fits, so it keeps running where it is until one does: 0\/3 clusters are available: /);
    assert.deepEqual(byName.get("sticky-deployment")!.tolerated, ["member1"]);
    const member2 = (out.status.capacity as Array<{ name: string; receives: number; before: { pods: number }; after?: { pods: number } }>).find((c) => c.name === "member2");
    assert.equal(member2?.receives, 1);
    assert.equal(member2?.before.pods, 110);
    assert.equal(member2?.after?.pods, 109);

    for (const [k, rv] of versions) assert.equal((await h.get(k))?.metadata.resourceVersion, rv, `${k} was not written`);
    const now = (await h.store.list<Cluster>("cluster.karmada.io/Cluster")).items.map((c) => c.metadata.resourceVersion!);
    assert.equal(clusterVersions.length, 3);
    assert.deepEqual(now, clusterVersions, "no Cluster was written");
  });

  test("failing member1 and member2 together: nginx goes nowhere (its affinity names only those two)", async () => {
    const res = await post(failing("member1", "member2"));
    assert.equal(res.statusCode, 200, res.body);
    const nginx = (res.json().status.bindings as Outcome[]).find((o) => o.name === "nginx-deployment")!;
    assert.equal(nginx.result, "NoClusterFit");
    assert.deepEqual(nginx.evictions.map((e) => e.cluster), ["member1", "member2"]);
  });

  test("an unknown cluster, a duplicate and an empty list are 422 Statuses naming the field", async () => {
    const cases: Array<[unknown, string[]]> = [
      [failing("member1", "member9"), ["spec.clusters[1]"]],
      [failing("member2", "member2"), ["spec.clusters[1]"]],
      [failing(), ["spec.clusters"]],
      [failing(7, { name: "member1" }), ["spec.clusters[0]", "spec.clusters[1]"]],
      [{ apiVersion: "scheduling.flotilla.io/v1alpha1", kind: "FailureSimulation", spec: { clusters: "member1" } }, ["spec.clusters"]],
      [{ apiVersion: "scheduling.flotilla.io/v1alpha1", kind: "Simulation", spec: { clusters: ["member1"], binding: {} } }, ["kind", "spec.binding"]],
    ];
    for (const [body, fields] of cases) {
      const res = await post(body);
      assert.equal(res.statusCode, 422, `${JSON.stringify(body)}: ${res.body}`);
      assert.equal(res.json().kind, "Status");
      assert.equal(res.json().reason, "Invalid");
      assert.equal(res.json().details.kind, "failuresimulations");
      assert.deepEqual(res.json().details.causes.map((c: { field: string }) => c.field), fields, JSON.stringify(body));
    }
  });

  test("hostile bodies are 4xx Statuses, never 5xx", async () => {
    for (const payload of ["", "null", "[]", "\"member1\"", "{\"spec\":", "{\"__proto__\":{\"x\":1},\"spec\":{\"clusters\":[\"member1\"]}}"]) {
      const res = await gw.http.inject({ method: "POST", url: PATH, payload, headers: { "content-type": "application/json", ...bearer() } });
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${payload}: ${res.statusCode} ${res.body}`);
      assert.equal(res.json().kind, "Status", payload);
    }
  });

  test("without a token it is 401; a user without the permission is 403", async () => {
    assert.equal((await post(failing("member1"), {})).statusCode, 401);
    const res = await post(failing("member1"), bearer(TOKENS.nobody));
    assert.equal(res.statusCode, 403, res.body);
    assert.equal(res.json().kind, "Status");
  });
});
