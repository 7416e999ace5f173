// The Kubernetes install (deploy/kubernetes): each overlay renders with `kubectl kustomize`, every
// rendered object passes the Kubernetes JSON schemas (kubernetes-models), and the invariants that
// keep a service alive hold: probes on the endpoints the service serves, requests and limits, a
// PodDisruptionBudget, non-root pods, every setting the service requires set (and parsed by its own
// loader), every file it reads mounted, every address it dials served, and an image that holds the
// command. The schemas accept unknown fields, so misspelt ones are caught by these invariants only.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { loadConfig, type Schema } from "@flotilla/config";
import { ServiceHost, serviceSchema } from "@flotilla/runtime";
import { configSchema as gateway } from "../../services/gateway/src/config.js";
import { configSchema as binding } from "../../services/binding/src/config.js";
import { configSchema as scheduler } from "../../services/scheduler/src/config.js";
import { configSchema as taintManager } from "../../services/taint-manager/src/config.js";
import { configSchema as eviction } from "../../services/eviction/src/config.js";
import { configSchema as execution } from "../../services/execution/src/config.js";
import { configSchema as agent } from "../../services/agent/src/config.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SCHEMAS: Record<string, Schema> = { gateway, binding, scheduler, "taint-manager": taintManager, eviction, execution };
const SERVICES = Object.keys(SCHEMAS);
const OVERLAYS = ["dev", "external"];

/** Whether a service's app.ts serves `path`: one the ServiceHost it declares serves, or a route of its own. */
const serves = (app: string, p: string) => (app.includes("new ServiceHost(") && (ServiceHost.ENDPOINTS as readonly string[]).includes(p)) || app.includes(`http.get("${p}"`);
/** Containers running the Flotilla image (the services, the simulator, the join Job). */
const IMAGE = { dev: "flotilla", external: "registry.example.com/flotilla" } as Record<string, string>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = any;

const hasKubectl = (() => {
  try {
    execFileSync("kubectl", ["version", "--client"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
// CI installs kubectl (.ci/run); elsewhere, without it, there is nothing to render with
const skip = !hasKubectl && !process.env.CI ? "kubectl is not installed" : false;

const rendered = new Map<string, Obj[]>();
/** An overlay by name, or a kustomization by its path under deploy/kubernetes (`agent`: the member-side agent). */
function render(overlay: string): Obj[] {
  const seen = rendered.get(overlay);
  if (seen) return structuredClone(seen);
  const dir = overlay.includes("/") || overlay === "agent" ? path.join(root, "deploy/kubernetes", overlay) : path.join(root, "deploy/kubernetes/overlays", overlay);
  const out = execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8", maxBuffer: 64 << 20 });
  const objs = parseAllDocuments(out)
    .map((d) => {
      if (d.errors.length) throw d.errors[0];
      return d.toJS() as Obj;
    })
    .filter(Boolean);
  rendered.set(overlay, objs);
  return structuredClone(objs);
}

const find = (objs: Obj[], kind: string, name: string): Obj | undefined => objs.find((o) => o.kind === kind && o.metadata?.name === name);
const matches = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** The string data of a Secret or ConfigMap (Secret data is base64). */
function dataOf(o: Obj): Record<string, string> {
  if (o.kind === "ConfigMap") return { ...o.data };
  return { ...Object.fromEntries(Object.entries(o.data ?? {}).map(([k, v]) => [k, Buffer.from(String(v), "base64").toString("utf8")])), ...o.stringData };
}

/** The environment a container gets: envFrom first, env over it (as the kubelet does). */
function envOf(objs: Obj[], c: Obj): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    const src = from.configMapRef ? find(objs, "ConfigMap", from.configMapRef.name) : find(objs, "Secret", from.secretRef.name);
    assert.ok(src, `${c.name}: envFrom ${JSON.stringify(from)} names no object`);
    Object.assign(env, dataOf(src));
  }
  for (const e of c.env ?? []) {
    if (e.valueFrom?.secretKeyRef) {
      const s = find(objs, "Secret", e.valueFrom.secretKeyRef.name);
      assert.ok(s && e.valueFrom.secretKeyRef.key in dataOf(s), `${c.name}: ${e.name} refers to a missing Secret key`);
      env[e.name] = dataOf(s)[e.valueFrom.secretKeyRef.key]!;
    } else env[e.name] = e.value ?? "";
  }
  return env;
}

/** The model class of an object's apiVersion and kind, from kubernetes-models. */
async function modelOf(apiVersion: string, kind: string): Promise<new (d: Obj) => { validate(): void }> {
  const mod = (await import(`kubernetes-models/${apiVersion}`)) as Record<string, new (d: Obj) => { validate(): void }>;
  const cls = mod[kind];
  assert.ok(cls, `kubernetes-models has no ${apiVersion} ${kind}`);
  return cls;
}

/** Where a file path inside a container comes from: the Secret key behind the mount, or undefined. */
function fileSource(objs: Obj[], pod: Obj, c: Obj, file: string): string | undefined {
  for (const m of c.volumeMounts ?? []) {
    if (!file.startsWith(`${m.mountPath}/`)) continue;
    const rel = file.slice(m.mountPath.length + 1);
    const vol = pod.volumes?.find((v: Obj) => v.name === m.name);
    if (!vol?.secret) continue;
    const secret = find(objs, "Secret", vol.secret.secretName);
    if (!secret) continue;
    const key = vol.secret.items ? vol.secret.items.find((i: Obj) => i.path === rel)?.key : rel;
    if (key && key in dataOf(secret)) return dataOf(secret)[key];
  }
  return undefined;
}

/**
 * The object as the API server reads it: kustomize folds long base64 Secret values over lines,
 * and Go's base64 decoder skips the line breaks, which the schema's byte format does not.
 */
function wire(o: Obj): Obj {
  if (o.kind !== "Secret" || !o.data) return o;
  return { ...o, data: Object.fromEntries(Object.entries(o.data).map(([k, v]) => [k, String(v).replace(/[\r\n]/g, "")])) };
}

/** Containers running Flotilla's image in every workload of `objs`. */
function workloads(objs: Obj[]): { owner: Obj; pod: Obj; c: Obj }[] {
  return objs
    .filter((o) => ["Deployment", "StatefulSet", "Job"].includes(o.kind))
    .flatMap((o) => (o.spec.template.spec.containers as Obj[]).map((c) => ({ owner: o, pod: o.spec.template.spec, c })));
}

const dockerfile = readFileSync(path.join(root, "Dockerfile"), "utf8");
/** A path in the image exists once built: dist/x.js from src/x.ts of a directory the Dockerfile copies, or a file it copies. */
function inImage(p: string): boolean {
  const copied = [...dockerfile.matchAll(/^COPY (?:--from=\S+ )?(.+) (\S+)$/gm)].flatMap((m) => m[1]!.split(/\s+/));
  if (!copied.some((src) => p === src || p.startsWith(`${src.replace(/\/$/, "")}/`))) return false;
  const source = p.replace(/\/dist\/(.+)\.js$/, "/src/$1.ts");
  return existsSync(path.join(root, source));
}

for (const overlay of OVERLAYS) {
  test(`the ${overlay} overlay renders and every object passes the Kubernetes schemas`, { skip }, async () => {
    const objs = render(overlay);
    assert.ok(objs.length > 20, `only ${objs.length} objects rendered`);
    for (const o of objs) {
      const Model = await modelOf(o.apiVersion, o.kind);
      try {
        new Model(wire(o)).validate();
      } catch (e) {
        assert.fail(`${o.kind} ${o.metadata?.name}: ${(e as Error).message}`);
      }
      if (o.kind !== "Namespace") assert.equal(o.metadata.namespace, "flotilla", `${o.kind} ${o.metadata.name} is not in the flotilla namespace`);
    }
  });

  test(`in the ${overlay} overlay every service has a Deployment, Service, ServiceAccount and PodDisruptionBudget that select its pods`, { skip }, () => {
    const objs = render(overlay);
    for (const name of SERVICES) {
      const d = find(objs, "Deployment", name);
      assert.ok(d, `no Deployment ${name}`);
      const labels = d.spec.template.metadata.labels;
      assert.ok(matches(d.spec.selector.matchLabels, labels));
      assert.ok(find(objs, "ServiceAccount", d.spec.template.spec.serviceAccountName), `${name}: no ServiceAccount ${d.spec.template.spec.serviceAccountName}`);
      const pdb = objs.find((o) => o.kind === "PodDisruptionBudget" && matches(o.spec.selector.matchLabels, labels));
      assert.ok(pdb, `${name}: no PodDisruptionBudget selects its pods`);
      const svc = find(objs, "Service", name);
      assert.ok(svc && matches(svc.spec.selector, labels), `${name}: no Service selects its pods`);
      const ports = new Set((d.spec.template.spec.containers[0].ports as Obj[]).map((p) => p.name));
      for (const p of svc.spec.ports) assert.ok(ports.has(p.targetPort), `${name}: Service port ${p.name} targets ${p.targetPort}, which the pod does not name`);
    }
    const replicas = Object.fromEntries(SERVICES.map((n) => [n, find(objs, "Deployment", n).spec.replicas]));
    assert.deepEqual(replicas, Object.fromEntries(SERVICES.map((n) => [n, overlay === "dev" ? 1 : 3])));
  });

  test(`in the ${overlay} overlay every pod runs as non-root with requests, limits and probes, from an image that holds its command`, { skip }, () => {
    const objs = render(overlay);
    const list = workloads(objs);
    assert.ok(list.length >= SERVICES.length);
    for (const { owner, pod, c } of list) {
      const who = `${owner.kind} ${owner.metadata.name}`;
      assert.equal(pod.securityContext?.runAsNonRoot, true, `${who}: runAsNonRoot`);
      assert.equal(c.securityContext?.allowPrivilegeEscalation, false, `${who}: allowPrivilegeEscalation`);
      assert.deepEqual(c.securityContext?.capabilities?.drop, ["ALL"], `${who}: capabilities`);
      for (const r of ["cpu", "memory"]) {
        assert.ok(c.resources?.requests?.[r], `${who}: no ${r} request`);
        assert.ok(c.resources?.limits?.[r], `${who}: no ${r} limit`);
      }
      if (owner.kind !== "Job") {
        assert.ok(c.readinessProbe, `${who}: no readiness probe`);
        assert.ok(c.livenessProbe, `${who}: no liveness probe`);
      }
      if (!c.image.startsWith(`${IMAGE[overlay]}:`)) continue;
      // Flotilla's image: read-only root, and the command is a file the Dockerfile's build leaves
      assert.equal(c.securityContext.readOnlyRootFilesystem, true, `${who}: readOnlyRootFilesystem`);
      const words = [...(c.command ?? []), ...(c.args ?? [])].join(" ").split(/\s+/);
      const scripts = words.filter((w) => /^(services|packages|scripts)\/.+\.(m?js|ya?ml)$/.test(w));
      assert.ok(scripts.length, `${who}: runs no file of the image`);
      for (const s of scripts) assert.ok(inImage(s), `${who}: ${s} is not in the image the Dockerfile builds`);
    }
  });

  test(`in the ${overlay} overlay each service's settings load, its files are mounted and its probes hit endpoints it serves`, { skip }, () => {
    const objs = render(overlay);
    const known = new Set(Object.values(SCHEMAS).flatMap((s) => Object.keys(s)).concat(Object.keys(serviceSchema)));
    for (const name of SERVICES) {
      const d = find(objs, "Deployment", name);
      const pod = d.spec.template.spec;
      const c = pod.containers[0];
      const env = envOf(objs, c);
      for (const k of Object.keys(env)) assert.ok(known.has(k), `${name}: ${k} is no setting of any service (misspelt?)`);
      // the service's own loader: every required setting present, every value parses
      const cfg = loadConfig({ ...serviceSchema, ...SCHEMAS[name]! }, env) as Record<string, unknown>;
      assert.equal(cfg.HOST, "0.0.0.0", `${name}: listens on loopback only`);
      // every file setting points at a mounted Secret key
      for (const [k, v] of Object.entries(env)) {
        if (!k.endsWith("_FILE") || !v || v === "-") continue;
        assert.ok(fileSource(objs, pod, c, v) !== undefined, `${name}: ${k}=${v} is not a mounted Secret key`);
      }
      if (name === "gateway" || name === "execution") assert.ok(env.ENCRYPTION_KEYS_FILE, `${name}: member credentials would be stored in clear`);
      if (name === "gateway") {
        assert.ok(env.TOKEN_AUTH_FILE || env.OIDC_ISSUER_URL, "gateway: no authentication");
        assert.ok(env.TLS_CERT_FILE && env.TLS_KEY_FILE, "gateway: no TLS on a non-loopback HOST");
        assert.equal(env.TLS_CERT_CREATE ?? "", "", "gateway: cannot create a certificate on a read-only Secret mount");
      }
      // probes: the named port is the service's PORT, the path one its app serves
      const app = readFileSync(path.join(root, "services", name, "src/app.ts"), "utf8");
      for (const [kind, probe] of [
        ["readiness", c.readinessProbe],
        ["liveness", c.livenessProbe],
        ["startup", c.startupProbe],
      ] as const) {
        if (!probe) continue;
        const port = (c.ports as Obj[]).find((p) => p.name === probe.httpGet.port);
        assert.equal(port?.containerPort, cfg.PORT, `${name}: ${kind} probe port`);
        assert.ok(serves(app, probe.httpGet.path), `${name}: ${kind} probe ${probe.httpGet.path} is not served`);
        assert.equal(probe.httpGet.scheme ?? "HTTP", name === "gateway" ? "HTTPS" : "HTTP", `${name}: ${kind} probe scheme`);
      }
      assert.equal(c.readinessProbe.httpGet.path, "/readyz");
      // every host:port a service dials is a Service of the overlay with that port
      const dials = Object.entries(env).filter(([k]) => k.endsWith("_GRPC_URL"));
      if (overlay === "dev") dials.push(["NATS_URL", env.NATS_URL!], ["DATABASE_URL", env.DATABASE_URL!]);
      for (const [k, v] of dials) {
        const u = new URL(v.includes("://") ? v : `grpc://${v}`);
        const svc = find(objs, "Service", u.hostname);
        assert.ok(svc, `${name}: ${k} names no Service ${u.hostname}`);
        assert.ok((svc.spec.ports as Obj[]).some((p) => String(p.port) === u.port), `${name}: ${k}: Service ${u.hostname} has no port ${u.port}`);
      }
    }
  });
}

/** The internal gRPC APIs: the setting that turns a server's port on, the caller's address setting and the CA setting it checks the server with. */
const INTERNAL_GRPC = [
  { server: "scheduler", portSetting: "SCHEDULER_GRPC_PORT", urlSetting: "SCHEDULER_GRPC_URL", caSetting: "SCHEDULER_CA_FILE" },
  { server: "execution", portSetting: "ESTIMATOR_PORT", urlSetting: "ESTIMATOR_GRPC_URL", caSetting: "ESTIMATOR_CA_FILE" },
];

for (const overlay of OVERLAYS) {
  test(`in the ${overlay} overlay the internal gRPC ports speak TLS, take service account tokens and are reached only by their callers (NetworkPolicy)`, { skip }, async () => {
    const objs = render(overlay);
    const { X509Certificate } = await import("node:crypto");
    for (const g of INTERNAL_GRPC) {
      const d = find(objs, "Deployment", g.server);
      const pod = d.spec.template.spec;
      const c = pod.containers[0];
      const env = envOf(objs, c);
      const cfg = loadConfig({ ...serviceSchema, ...SCHEMAS[g.server]! }, env) as Record<string, unknown>;
      assert.ok(cfg[g.portSetting], `${g.server}: ${g.portSetting} is on`);
      // what the service's main requires while the port is on
      for (const k of ["TLS_CERT_FILE", "TLS_KEY_FILE", "SERVICE_ACCOUNT_KEY_FILE"]) assert.ok(env[k], `${g.server}: ${k} is not set`);
      const grpcPort = (c.ports as Obj[]).find((p) => p.containerPort === cfg[g.portSetting]);
      assert.ok(grpcPort, `${g.server}: no container port ${String(cfg[g.portSetting])}`);
      const callers = SERVICES.filter((n) => n !== g.server && envOf(objs, find(objs, "Deployment", n).spec.template.spec.containers[0])[g.urlSetting]);
      assert.ok(callers.length, `nobody calls ${g.server}`);
      for (const caller of callers) {
        const cd = find(objs, "Deployment", caller);
        const cc = cd.spec.template.spec.containers[0];
        const cenv = envOf(objs, cc);
        assert.ok(cenv[g.caSetting], `${caller}: ${g.caSetting} is not set: it could not check ${g.server}'s certificate`);
        if (overlay === "dev") {
          // the caller's CA is the server's certificate, made for the name the caller dials
          const ca = fileSource(objs, cd.spec.template.spec, cc, cenv[g.caSetting]!)!;
          assert.equal(ca, fileSource(objs, pod, c, env.TLS_CERT_FILE!), `${caller}: ${g.caSetting} is not ${g.server}'s certificate`);
          const host = cenv[g.urlSetting]!.split(":")[0]!;
          assert.match(new X509Certificate(ca).subjectAltName ?? "", new RegExp(`DNS:${host}(,|$)`), `${g.server}'s certificate does not name ${host}`);
        }
      }
      // a policy selects the server's pods, and each rule admitting the gRPC port admits its callers' pods only
      const labels = d.spec.template.metadata.labels;
      const policies = objs.filter((o) => o.kind === "NetworkPolicy" && matches(o.spec.podSelector.matchLabels ?? {}, labels));
      assert.ok(policies.length, `no NetworkPolicy selects ${g.server}'s pods`);
      const admitting = policies.flatMap((np) => (np.spec.ingress ?? []) as Obj[]).filter((r) => !r.ports || (r.ports as Obj[]).some((p) => p.port === grpcPort.name || p.port === grpcPort.containerPort));
      assert.ok(admitting.length, `${g.server}: no rule admits its callers on ${grpcPort.name}`);
      for (const r of admitting) {
        assert.ok(r.from?.length, `${g.server}: a rule admits everyone on ${grpcPort.name}`);
        for (const f of r.from as Obj[]) {
          assert.ok(f.podSelector && !f.namespaceSelector && !f.ipBlock, `${g.server}: ${JSON.stringify(f)} admits more than pods of this namespace`);
          const admitted = SERVICES.filter((n) => matches(f.podSelector.matchLabels ?? {}, find(objs, "Deployment", n).spec.template.metadata.labels));
          assert.deepEqual(admitted.sort(), [...callers].sort(), `${g.server}: ${grpcPort.name} admits ${admitted.join(", ")}`);
        }
      }
    }
  });
}

test("the dev overlay runs member3 in Pull mode: its agent's settings load, its files are mounted, its probes are served, and join-members leaves member3 to it", { skip }, () => {
  const objs = render("dev");
  const d = find(objs, "Deployment", "agent-member3");
  assert.ok(d, "no Deployment agent-member3");
  assert.equal(d.spec.replicas, 1, "one agent per member");
  assert.equal(d.spec.strategy.type, "Recreate", "never two agents of one member at once");
  const pod = d.spec.template.spec;
  const c = pod.containers[0];
  const env = envOf(objs, c);
  const script = c.command.join(" ");
  const [gatewayUrl, adminUrl, member, stateDir] = /scripts\/sim-agent\.mjs (\S+) (\S+) (\S+) (\S+)/.exec(script)!.slice(1) as [string, string, string, string];
  assert.equal(member, "member3");
  // what scripts/sim-agent.mjs adds before it runs the agent, then the agent's own loader
  const settings = { ...env, CLUSTER_NAME: member, GATEWAY_URL: gatewayUrl, GATEWAY_TOKEN_FILE: `${stateDir}/agent-member3.token`, MEMBER_API_SERVER: "http://member-sim:7103", MEMBER_TOKEN_FILE: `${stateDir}/member3.member-token` };
  const known = new Set(Object.keys(agent).concat(["MEMBER_HOST", "NODE_EXTRA_CA_CERTS"]));
  for (const k of Object.keys(env)) assert.ok(known.has(k), `agent: ${k} is no setting of the agent (misspelt?)`);
  const cfg = loadConfig(agent, settings) as Record<string, unknown>;
  assert.equal(cfg.HOST, "0.0.0.0");
  // the state it writes is a writable volume; the files it reads are mounted
  assert.ok((c.volumeMounts as Obj[]).some((m) => m.mountPath === stateDir && pod.volumes.find((v: Obj) => v.name === m.name)?.emptyDir), `${stateDir} is not a writable volume`);
  for (const f of [env.GATEWAY_CA_FILE!, env.NODE_EXTRA_CA_CERTS!, "/etc/flotilla/tokens.csv"]) assert.ok(fileSource(objs, pod, c, f) !== undefined, `agent: ${f} is not a mounted Secret key`);
  // probes on its PORT, on paths its HTTP server answers
  const app = readFileSync(path.join(root, "services/agent/src/app.ts"), "utf8");
  for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
    assert.equal((c.ports as Obj[]).find((p) => p.name === probe.httpGet.port)?.containerPort, cfg.PORT);
    assert.ok(serves(app, probe.httpGet.path), `agent: probe ${probe.httpGet.path} is not served`);
  }
  assert.equal(c.readinessProbe.httpGet.path, "/readyz");
  // the addresses it dials are Services with those ports
  for (const u of [new URL(gatewayUrl), new URL(adminUrl), new URL(settings.MEMBER_API_SERVER)]) {
    const svc = find(objs, "Service", u.hostname);
    assert.ok(svc && (svc.spec.ports as Obj[]).some((p) => String(p.port) === u.port), `agent: no Service ${u.hostname} with port ${u.port}`);
  }
  // the join Job skips member3
  const job = find(objs, "Job", "join-members");
  assert.equal(envOf(objs, job.spec.template.spec.containers[0]).PULL_MEMBERS, "member3");
});

test("the member-side agent (deploy/kubernetes/agent) renders, passes the schemas, runs as non-root from the image with in-cluster credentials, and its settings load", { skip }, async () => {
  const objs = render("agent");
  for (const o of objs) {
    const Model = await modelOf(o.apiVersion, o.kind);
    new Model(wire(o)).validate();
    if (o.kind !== "Namespace" && o.kind !== "ClusterRoleBinding") assert.equal(o.metadata.namespace, "flotilla-agent", `${o.kind} ${o.metadata.name}`);
  }
  const d = find(objs, "Deployment", "flotilla-agent");
  assert.ok(d);
  assert.equal(d.spec.replicas, 1);
  assert.equal(d.spec.strategy.type, "Recreate");
  const pod = d.spec.template.spec;
  const c = pod.containers[0];
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.equal(c.securityContext.readOnlyRootFilesystem, true);
  assert.deepEqual(c.securityContext.capabilities.drop, ["ALL"]);
  for (const r of ["cpu", "memory"]) assert.ok(c.resources.requests[r] && c.resources.limits[r]);
  assert.deepEqual(c.args, ["services/agent/dist/main.js"]);
  assert.ok(inImage(c.args[0]), "the agent's main is not in the image");
  // the member through the pod's own ServiceAccount, bound on the member
  assert.equal(pod.automountServiceAccountToken, true);
  const sa = find(objs, "ServiceAccount", pod.serviceAccountName);
  assert.ok(sa, "no ServiceAccount");
  assert.ok(objs.some((o) => o.kind === "ClusterRoleBinding" && o.subjects.some((x: Obj) => x.kind === "ServiceAccount" && x.name === sa.metadata.name && x.namespace === "flotilla-agent")));
  const env = envOf(objs, c);
  for (const k of Object.keys(env)) assert.ok(k in agent, `agent: ${k} is no setting of the agent (misspelt?)`);
  assert.ok(!Object.keys(env).some((k) => k.startsWith("MEMBER_")), "in-cluster credentials: no MEMBER_* setting");
  const cfg = loadConfig(agent, env) as Record<string, unknown>;
  assert.equal(cfg.HOST, "0.0.0.0");
  assert.equal(new URL(String(cfg.GATEWAY_URL)).protocol, "https:");
  for (const f of [env.GATEWAY_TOKEN_FILE!, env.GATEWAY_CA_FILE!]) assert.match(fileSource(objs, pod, c, f) ?? "", /^REPLACE-ME/, `${f}: a mounted placeholder`);
  const app = readFileSync(path.join(root, "services/agent/src/app.ts"), "utf8");
  for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
    assert.equal((c.ports as Obj[]).find((p) => p.name === probe.httpGet.port)?.containerPort, cfg.PORT);
    assert.ok(serves(app, probe.httpGet.path), `agent: probe ${probe.httpGet.path} is not served`);
  }
});

test("the dev overlay's credentials are usable: the token file, encryption key, signing key and certificate parse", { skip }, async () => {
  const objs = render("dev");
  const files = dataOf(objs.find((o) => o.kind === "Secret" && o.metadata.name.startsWith("flotilla-files"))!);
  assert.match(files["tokens.csv"]!, /^[^,]+,admin,admin,"system:masters"\n$/);
  assert.match(files["encryption-keys"]!, /^\w+:[A-Za-z0-9+/]{43}=\n$/);
  const { createPrivateKey, X509Certificate } = await import("node:crypto");
  assert.equal(createPrivateKey(files["sa.key"]!).asymmetricKeyDetails?.namedCurve, "prime256v1");
  const cert = new X509Certificate(files["tls.crt"]!);
  assert.ok(cert.checkPrivateKey(createPrivateKey(files["tls.key"]!)), "tls.key does not match tls.crt");
  assert.match(cert.subjectAltName ?? "", /DNS:gateway(,|$)/);
  assert.ok(new Date(cert.validTo) > new Date(Date.now() + 365 * 86_400_000), "the dev certificate expires within a year");
  // the internal gRPC servers' certificate, and the signing key's public half the estimator verifies with
  const internal = new X509Certificate(files["internal-tls.crt"]!);
  assert.ok(internal.checkPrivateKey(createPrivateKey(files["internal-tls.key"]!)), "internal-tls.key does not match internal-tls.crt");
  assert.ok(new Date(internal.validTo) > new Date(Date.now() + 365 * 86_400_000), "the internal certificate expires within a year");
  const { createPublicKey } = await import("node:crypto");
  assert.equal(createPublicKey(files["sa.pub"]!).export({ type: "spki", format: "pem" }), createPublicKey(createPrivateKey(files["sa.key"]!)).export({ type: "spki", format: "pem" }), "sa.pub is not sa.key's public key");
  // the external overlay ships placeholders only
  const external = dataOf(render("external").find((o) => o.kind === "Secret" && o.metadata.name.startsWith("flotilla-files"))!);
  for (const [k, v] of Object.entries(external)) assert.match(v, /^REPLACE-ME/, `external ${k} is not a placeholder`);
});
