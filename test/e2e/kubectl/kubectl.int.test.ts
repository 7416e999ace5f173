// A stock kubectl against the gateway process (its build, over TLS, with a token), reading the
// OpenAPI v3 discovery as it reads kube-apiserver's: apply validates on the server
// (fieldValidation=Strict) without --validate=false, explain prints the proto doc comments, and
// edit round-trips a PropagationPolicy and a Deployment and reopens an invalid edit naming the field.
import { after, before, describe, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { eventually, freshDatabase, kubectlAt, kubectlVersion, type TestDatabase } from "@flotilla/testkit";
import { ProcessLogs } from "../../load/lib/logs.js";
import { freePort } from "../../load/lib/proc.js";
import { adminTokenFile, deleteStream, isolatedEnv, launchService, root, type AdminTokenFile, type Managed } from "../../load/lib/stack.js";

const EXAMPLES = path.join(root, "examples");

/** GET over TLS with the gateway's own certificate as the only CA; the status code, or 0 when it does not answer. */
function httpsStatus(url: string, ca: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const req = https.get(url, { ca }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", () => resolve(0));
  });
}

describe("kubectl against the gateway process (TLS, token)", () => {
  let db: TestDatabase;
  let dir: string;
  let tokens: AdminTokenFile;
  let gateway: Managed | undefined;
  let url: string;
  let ca: string;
  let stream: string;
  const logs = new ProcessLogs();
  let available: string | undefined;

  before(async () => {
    const v = await kubectlVersion();
    if (!v) return;
    // kubectl reads /openapi/v3 from 1.29 on (1.27 and 1.28 validate with the protobuf /openapi/v2 only)
    assert.ok(v.major > 1 || v.minor >= 29, `kubectl ${v.gitVersion} validates against /openapi/v2 only, which the gateway does not serve; these tests need kubectl 1.29 or later`);
    available = v.gitVersion;
    db = await freshDatabase();
    dir = await mkdtemp(path.join(os.tmpdir(), "flotilla-kubectl-"));
    tokens = adminTokenFile();
    const port = await freePort();
    const env = isolatedEnv(db, "KUBECTL");
    stream = env.EVENTS_STREAM;
    ca = path.join(dir, "tls.crt");
    gateway = launchService("gateway", {
      env: { ...env, LOG_LEVEL: "warn", PORT: String(port), GRPC_PORT: "0", TOKEN_AUTH_FILE: tokens.file, TLS_CERT_FILE: ca, TLS_KEY_FILE: path.join(dir, "tls.key"), TLS_CERT_CREATE: "true" },
      logs,
    });
    url = `https://127.0.0.1:${port}`;
    await eventually(
      async () => {
        if (gateway?.exit) throw new Error(`the gateway exited: ${logs.tail(4000)}`);
        return (await readFile(ca).then((c) => httpsStatus(`${url}/readyz`, c), () => 0)) === 200;
      },
      { timeoutMs: 30_000, intervalMs: 200, message: "the gateway answers /readyz over TLS" },
    );
  });
  after(async () => {
    await gateway?.stop();
    if (!available) return;
    tokens.remove();
    await deleteStream(stream).catch(() => undefined);
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  const present = (t: TestContext) => {
    if (available) return true;
    if (process.env.CI) assert.fail("kubectl is required in CI (.ci/run installs it when missing)");
    t.skip("kubectl is not installed: nothing to run these tests with");
    return false;
  };
  /** kubectl as the administrator; resolves with its output whatever its exit code. */
  const kubectl = (args: string[], env: Record<string, string> = {}) => kubectlAt(url, ca, env)(tokens.token, ...args);
  /** An EDITOR for kubectl edit: runs `sed -i <expr>` on the file and appends what it saw to `seen`. */
  const editor = async (name: string, sedExpr: string) => {
    const file = path.join(dir, `${name}.sh`);
    const seen = path.join(dir, `${name}.seen`);
    await writeFile(file, `#!/bin/sh\ncat "$1" >> '${seen}'\nsed -i '${sedExpr}' "$1"\n`);
    await chmod(file, 0o755);
    return { EDITOR: file, seen: () => readFile(seen, "utf8") };
  };

  test("kubectl apply of the seed's manifests validates (without --validate=false) and creates them; a second apply updates them", async (t) => {
    if (!present(t)) return;
    const first = await kubectl(["apply", "-f", path.join(EXAMPLES, "failover.yaml"), "-v=6"]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /deployment\.apps\/nginx created/);
    assert.match(first.stdout, /propagationpolicy\.policy\.karmada\.io\/nginx-propagation created/);
    // it read the OpenAPI v3 document of the group-version and left validation to the server
    assert.match(first.stderr, /\/openapi\/v3\/apis\/policy\.karmada\.io\/v1alpha1\?hash=[0-9A-F]+/);
    assert.match(first.stderr, /\/propagationpolicies\?\S*fieldValidation=Strict/);
    const edited = (await readFile(path.join(EXAMPLES, "failover.yaml"), "utf8")).replace("weight: 2", "weight: 3");
    await writeFile(path.join(dir, "edited.yaml"), edited);
    const second = await kubectl(["apply", "-f", path.join(dir, "edited.yaml")]);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /nginx-propagation configured/);
  });

  test("kubectl apply of a manifest with a misspelt field fails naming the field and changes nothing; --validate=warn drops it with a warning", async (t) => {
    if (!present(t)) return;
    const bad = (await readFile(path.join(EXAMPLES, "failover.yaml"), "utf8")).replace("clusterAffinity:", "clusterAfinity:").replace("weight: 2", "weight: 9");
    await writeFile(path.join(dir, "bad.yaml"), bad);
    const res = await kubectl(["apply", "-f", path.join(dir, "bad.yaml")]);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /The PropagationPolicy "nginx-propagation" is invalid: spec\.placement\.clusterAfinity: unknown field "spec\.placement\.clusterAfinity"/);
    const kept = await kubectl(["get", "pp", "nginx-propagation", "-n", "default", "-o", "jsonpath={.spec.placement.replicaScheduling.weightPreference.staticWeightList[1].weight}"]);
    assert.equal(kept.stdout, "3", "the refused apply wrote nothing");
    const warned = await kubectl(["apply", "--validate=warn", "-f", path.join(dir, "bad.yaml")]);
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(warned.stderr, /Warning: unknown field "spec\.placement\.clusterAfinity"/);
    const pp = JSON.parse((await kubectl(["get", "pp", "nginx-propagation", "-n", "default", "-o", "json"])).stdout);
    assert.equal(pp.spec.placement.clusterAfinity, undefined);
    assert.equal(pp.spec.placement.replicaScheduling.weightPreference.staticWeightList[1].weight, 9);
  });

  test("kubectl explain prints the field documentation of Karmada kinds, and what is known of the built-in kinds", async (t) => {
    if (!present(t)) return;
    const placement = await kubectl(["explain", "propagationpolicy.spec.placement"]);
    assert.equal(placement.code, 0, placement.stderr);
    assert.match(placement.stdout, /GROUP:\s+policy\.karmada\.io/);
    assert.match(placement.stdout, /FIELD: placement <Placement>/);
    assert.match(placement.stdout, /Where the selected resources go/);
    assert.match(placement.stdout, /clusterAffinity\s+<ClusterAffinity>\s+The clusters the resources may be scheduled to/);
    assert.match(placement.stdout, /clusterTolerations\s+<\[\]Toleration>/);
    for (const [what, expected] of [
      ["clusters.spec.taints", /FIELD: taints <\[\]Taint>/],
      ["resourcebindings.spec.clusters", /The scheduling result/],
      ["works.spec.workload", /The manifests to apply/],
      ["overridepolicies.spec.overrideRules", /FIELD: overrideRules <\[\]RuleWithCluster>/],
      ["deployments", /Deployment \(apps\/v1\) as Kubernetes defines it/],
      ["configmaps.metadata.labels", /FIELD: labels <map\[string\]string>/],
    ] as const) {
      const r = await kubectl(["explain", what]);
      assert.equal(r.code, 0, `${what}: ${r.stderr}`);
      assert.match(r.stdout, expected, what);
    }
  });

  test("kubectl edit round-trips a PropagationPolicy; an invalid edit is reopened naming the field and not saved", async (t) => {
    if (!present(t)) return;
    const ok = await editor("pp-ok", "s/weight: 9/weight: 5/");
    const edited = await kubectl(["edit", "pp", "nginx-propagation", "-n", "default"], { EDITOR: ok.EDITOR });
    assert.equal(edited.code, 0, edited.stderr);
    assert.match(edited.stdout, /propagationpolicy\.policy\.karmada\.io\/nginx-propagation edited/);
    const pp = JSON.parse((await kubectl(["get", "pp", "nginx-propagation", "-n", "default", "-o", "json"])).stdout);
    assert.equal(pp.spec.placement.replicaScheduling.weightPreference.staticWeightList[1].weight, 5);
    assert.equal(pp.spec.placement.clusterTolerations.length, 2, "the defaults survive the edit");

    const bad = await editor("pp-bad", "s/replicaScheduling:/replicaSchedulin:/");
    const refused = await kubectl(["edit", "pp", "nginx-propagation", "-n", "default"], { EDITOR: bad.EDITOR });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Edit cancelled, no valid changes were saved/);
    assert.match(await bad.seen(), /# \* spec\.placement\.replicaSchedulin: unknown field "spec\.placement\.replicaSchedulin"/);
    const after = JSON.parse((await kubectl(["get", "pp", "nginx-propagation", "-n", "default", "-o", "json"])).stdout);
    assert.equal(after.metadata.resourceVersion, pp.metadata.resourceVersion, "nothing was written");
  });

  test("kubectl edit round-trips a Deployment (a strategic merge patch); an invalid edit is reopened naming the field", async (t) => {
    if (!present(t)) return;
    const ok = await editor("deploy-ok", "s/replicas: 3/replicas: 4/");
    const edited = await kubectl(["edit", "deployment", "nginx", "-n", "default"], { EDITOR: ok.EDITOR });
    assert.equal(edited.code, 0, edited.stderr);
    const dep = JSON.parse((await kubectl(["get", "deployment", "nginx", "-n", "default", "-o", "json"])).stdout);
    assert.equal(dep.spec.replicas, 4);
    assert.deepEqual(dep.spec.template.spec.containers[0].resources.requests, { cpu: "100m", memory: "128Mi" }, "the containers are merged, not replaced");

    const bad = await editor("deploy-bad", "s/replicas: 4/replicas: -4/");
    const refused = await kubectl(["edit", "deployment", "nginx", "-n", "default"], { EDITOR: bad.EDITOR });
    assert.notEqual(refused.code, 0);
    assert.match(await bad.seen(), /# \* spec\.replicas: Invalid value: -4: must be greater than or equal to 0/);
    assert.equal(JSON.parse((await kubectl(["get", "deployment", "nginx", "-n", "default", "-o", "json"])).stdout).spec.replicas, 4);
  });
});
