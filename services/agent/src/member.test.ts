import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { memberEndpoint } from "./member.js";

test("in-cluster credentials: the API server from the environment, the ServiceAccount's token and CA from their files", async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), "agent-incluster-"));
  t.after(() => rm(root, { recursive: true, force: true }));
  const dir = path.join(root, "var/run/secrets/kubernetes.io/serviceaccount");
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "token"), "sa-token\n");
  await writeFile(path.join(dir, "ca.crt"), "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n");
  await writeFile(path.join(dir, "namespace"), "flotilla-agent");
  const env = { KUBERNETES_SERVICE_HOST: process.env.KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT: process.env.KUBERNETES_SERVICE_PORT };
  process.env.KUBERNETES_SERVICE_HOST = "10.96.0.1";
  process.env.KUBERNETES_SERVICE_PORT = "443";
  t.after(() => {
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  const e = memberEndpoint({ kubeconfig: "", server: "", tokenFile: "", caFile: "", inClusterRoot: root });
  assert.equal(e.server, "https://10.96.0.1:443");
  assert.equal(e.token, "sa-token");
  assert.match(e.caData ?? "", /BEGIN CERTIFICATE/);
});

test("an explicit server takes its token and CA from the files named", async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), "agent-member-"));
  t.after(() => rm(root, { recursive: true, force: true }));
  await writeFile(path.join(root, "token"), "member-token\n");
  const e = memberEndpoint({ kubeconfig: "", server: "https://member.example:6443", tokenFile: path.join(root, "token"), caFile: "" });
  assert.deepEqual(e, { server: "https://member.example:6443", token: "member-token" });
});
