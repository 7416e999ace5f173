// Dependency and override-policy wake-ups with three binding replicas (the other services one
// each): whichever replica receives the wake-up of a ConfigMap or of an OverridePolicy finds the
// bindings it concerns in the store, so a ConfigMap created after its Deployment (policy with
// propagateDeps) reaches every member of the Deployment within 5 s, and an OverridePolicy whose
// selector is narrowed gives the member copies back their template's form within 5 s, with no
// resync. Two rounds: the first with the replicas that rendered the bindings (three Deployments,
// each with its ConfigMaps, so the wake-ups land on different replicas), the second after every
// binding replica was killed and started again, so none of them has rendered anything (an
// in-memory mapping fails it every time). Needs the builds:
// npx tsc -b services/gateway services/execution services/binding services/scheduler services/taint-manager services/eviction
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { PostgresServer, canRunPostgresServer, eventually } from "@flotilla/testkit";
import { bearer, launch, waitReady, type Managed } from "../../load/lib/stack.js";
import { RB, root, startStack, type Obj } from "../failover/harness.js";

const APPS = ["web-0", "web-1", "web-2"];
const MEMBERS = ["member1", "member2"];
/** One ConfigMap and one OverridePolicy per round. */
const ROUNDS = [
  { configMap: "conf", policy: "team" },
  { configMap: "extra", policy: "tier" },
];
const OPS = "/apis/policy.karmada.io/v1alpha1/namespaces/default/overridepolicies";

const deployment = (name: string): Obj => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: "default", labels: { app: name } } as Obj["metadata"],
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        containers: [{ name: "web", image: "nginx", resources: { requests: { cpu: "10m", memory: "16Mi" } } }],
        volumes: ROUNDS.map((r) => ({ name: r.configMap, configMap: { name: `${name}-${r.configMap}` } })),
      },
    },
  },
});

const selectApps = APPS.map((name) => ({ apiVersion: "apps/v1", kind: "Deployment", name }));

test("three binding replicas: a ConfigMap created after its Deployment reaches every member of it within 5 s, and a narrowed OverridePolicy restores the member copies within 5 s, also after every replica restarted", { timeout: 120_000, skip: !canRunPostgresServer() && "no PostgreSQL binaries" }, async (t) => {
  // a Postgres of the test's own: eight service processes hold about 70 connections, most of a
  // default server's 100 that other tests share
  const pg = await PostgresServer.start({ maxConnections: 200 });
  const s = await startStack({ pg, replicas: { binding: 3 } }).catch(async (e: unknown) => {
    await pg.destroy();
    throw e;
  });
  const restarted: Managed[] = [];
  t.after(async () => {
    await Promise.all(restarted.map((p) => p.stop()));
    await s.close();
    await pg.destroy();
  });
  try {
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", {
      apiVersion: "policy.karmada.io/v1alpha1",
      kind: "PropagationPolicy",
      metadata: { name: "web", namespace: "default" },
      spec: { propagateDeps: true, resourceSelectors: selectApps, placement: { clusterAffinity: { clusterNames: MEMBERS }, replicaScheduling: { replicaSchedulingType: "Duplicated" } } },
    });
    for (const { policy } of ROUNDS) {
      await s.post(OPS, {
        apiVersion: "policy.karmada.io/v1alpha1",
        kind: "OverridePolicy",
        metadata: { name: policy, namespace: "default" },
        spec: { resourceSelectors: selectApps, overrideRules: [{ overriders: { labelsOverrider: [{ operator: "add", value: { [policy]: "web" } }] } }] },
      });
    }
    for (const name of APPS) await s.post("/apis/apps/v1/namespaces/default/deployments", deployment(name));

    const member = (c: string, kind: string, apiVersion: string, name: string) => s.sim.cluster(c).get(apiVersion, kind, name, "default") as Obj | undefined;
    const label = (c: string, name: string, key: string) => (member(c, "Deployment", "apps/v1", name)?.metadata as { labels?: Record<string, string> } | undefined)?.labels?.[key];
    const everywhere = (ok: (c: string, name: string) => boolean) => APPS.every((name) => MEMBERS.every((c) => ok(c, name)));
    await eventually(() => everywhere((c, name) => ROUNDS.every((r) => label(c, name, r.policy) === "web")), { timeoutMs: 30_000, message: "every Deployment on member1 and member2 with both overrides' labels" });
    await eventually(
      async () =>
        (await Promise.all(APPS.map((name) => s.get(RB(`${name}-deployment`))))).every((b, i) =>
          ROUNDS.every((r) => (b?.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.["resourcebinding.karmada.io/dependencies"]?.includes(`${APPS[i]}-${r.configMap}`)),
        ),
      { timeoutMs: 10_000, message: "each binding lists its ConfigMaps" },
    );
    assert.ok(everywhere((c, name) => ROUNDS.every((r) => !member(c, "ConfigMap", "v1", `${name}-${r.configMap}`))), "no ConfigMap anywhere yet");

    const round = async (r: (typeof ROUNDS)[number], what: string) => {
      // the ConfigMaps arrive after their Deployments
      let t0 = Date.now();
      for (const name of APPS) await s.post("/api/v1/namespaces/default/configmaps", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${name}-${r.configMap}` }, data: { "web.conf": name } });
      await eventually(() => everywhere((c, name) => !!member(c, "ConfigMap", "v1", `${name}-${r.configMap}`)), { timeoutMs: 5_000, intervalMs: 50, message: `${what}: every ConfigMap on every member of its Deployment within 5 s` });
      t.diagnostic(`${what}: ConfigMaps on every member ${Date.now() - t0} ms after their creation`);

      // the OverridePolicy's selector narrowed to none of them: the member copies lose its label
      const op = (await s.get(`${OPS}/${r.policy}`))!;
      t0 = Date.now();
      const put = await fetch(`${s.gw}${OPS}/${r.policy}`, {
        method: "PUT",
        headers: { ...bearer(s.token), "content-type": "application/json" },
        body: JSON.stringify({ ...op, spec: { ...op.spec, resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "other" }] } }),
      });
      assert.equal(put.status, 200, await put.text());
      await eventually(() => everywhere((c, name) => !!member(c, "Deployment", "apps/v1", name) && label(c, name, r.policy) === undefined), {
        timeoutMs: 5_000,
        intervalMs: 50,
        message: `${what}: every member copy without the narrowed policy's label within 5 s`,
      });
      t.diagnostic(`${what}: member copies restored ${Date.now() - t0} ms after the policy was narrowed`);
    };

    await round(ROUNDS[0]!, "replicas that rendered the bindings");

    // every binding replica killed and started again: none has rendered anything since
    const replicas = s.services.replicasOf("binding");
    await Promise.all(replicas.map((r) => r.proc.kill("SIGKILL")));
    for (const r of replicas) {
      if (r.index === 0) s.services.relaunch("binding");
      else restarted.push(launch(r.label, path.join(root, "services", "binding", "dist", "main.js"), [], s.processLogs, { env: r.env }));
    }
    await waitReady([s.services.procs.get("binding")!, ...restarted], replicas.map((r) => r.port), 30_000);
    await round(ROUNDS[1]!, "restarted replicas");
  } catch (e) {
    console.error(s.logs());
    throw e;
  }
});
