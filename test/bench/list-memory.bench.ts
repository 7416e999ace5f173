// Gateway memory while clients list many Works: fills a fresh database with Works of a
// realistic size, then for each mode starts a gateway process of its own and samples its RSS
// while `--clients` clients list every Work again and again for `--duration` seconds.
//   node --conditions=source --import tsx test/bench/list-memory.bench.ts [--works 20000] [--duration 30] [--clients 2] [--modes full,paged]
// modes: full = GET .../works (one response), paged = GET .../works?limit=500 following `continue`.
// A script, not a CI gate.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    works: { type: "string", default: "20000" },
    duration: { type: "string", default: "30" },
    clients: { type: "string", default: "2" },
    modes: { type: "string", default: "full,paged" },
    serve: { type: "string" }, // internal: run the gateway on this database URL
  },
});

// the gateway's test token file (access.test-support.ts): the lists are sent as its administrator
const ADMIN = (await import("../../services/gateway/src/access.test-support.js")).bearer();

if (values.serve) await serve(values.serve);
else await bench();

/** The gateway process: the gateway app on the given database, its URL on stdout. */
async function serve(url: string) {
  const { openDatabase, ObjectStore } = await import("@flotilla/store");
  const { buildGateway } = await import("../../services/gateway/src/app.js");
  const { testGatewayDeps } = await import("../../services/gateway/src/access.test-support.js");
  const db = await openDatabase({ url, create: false, migrate: false });
  const store = new ObjectStore(db.sql);
  const gw = buildGateway(testGatewayDeps(store));
  const { url: listening } = await gw.start({ host: "127.0.0.1", port: 0 });
  console.log(listening);
  process.on("SIGTERM", () => void gw.stop().then(() => db.close()).then(() => process.exit(0)));
}

/** A Work as the binding controller writes it, with a Deployment manifest and the status execution reports. */
function work(i: number) {
  const name = `app-${String(i).padStart(5, "0")}`;
  const labels = { app: name, team: `team-${i % 20}`, "app.kubernetes.io/part-of": "shop", "app.kubernetes.io/version": "1.4.2" };
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name,
      namespace: `ns-${i % 20}`,
      labels: { ...labels, "propagationpolicy.karmada.io/permanent-id": "6f1a0d8e-3a5b-4c1e-9b7d-2f0c8e4a1b6d", "resourcebinding.karmada.io/permanent-id": "0b8e7c6d-5a4f-4e3d-8c2b-1a0f9e8d7c6b" },
      annotations: { "deployment.kubernetes.io/revision": "3", "resourcetemplate.karmada.io/uid": "c7e1b2a3-9d8f-4e6a-b5c4-3d2e1f0a9b8c", "work.karmada.io/conflict-resolution": "abort" },
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: name } },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } },
      template: {
        metadata: { labels: { app: name, team: labels.team } },
        spec: {
          containers: [
            {
              name: "app",
              image: `registry.example.com/shop/${name}:1.4.2`,
              ports: [{ containerPort: 8080, name: "http", protocol: "TCP" }],
              env: Array.from({ length: 8 }, (_, k) => ({ name: `SETTING_${k}`, value: `value-${k}-${name}` })),
              resources: { requests: { cpu: "250m", memory: "256Mi" }, limits: { cpu: "1", memory: "512Mi" } },
              readinessProbe: { httpGet: { path: "/readyz", port: 8080 }, periodSeconds: 10 },
              livenessProbe: { httpGet: { path: "/healthz", port: 8080 }, periodSeconds: 20 },
            },
            { name: "proxy", image: "registry.example.com/infra/envoy:1.29", args: ["--config", "/etc/envoy/envoy.yaml"], resources: { requests: { cpu: "50m", memory: "64Mi" } } },
          ],
          volumes: [{ name: "config", configMap: { name: `${name}-config` } }],
        },
      },
    },
  };
  const cluster = `member${(i % 10) + 1}`;
  return {
    apiVersion: "work.karmada.io/v1alpha1",
    kind: "Work",
    metadata: {
      name: `${name}-687f7fb96f`,
      namespace: `karmada-es-${cluster}`,
      labels: { "work.karmada.io/permanent-id": "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a", "resourcebinding.karmada.io/permanent-id": "0b8e7c6d-5a4f-4e3d-8c2b-1a0f9e8d7c6b" },
      annotations: { "resourcebinding.karmada.io/name": `${name}-deployment`, "resourcebinding.karmada.io/namespace": deployment.metadata.namespace },
      finalizers: ["karmada.io/execution-controller"],
    },
    spec: { workload: { manifests: [deployment] } },
    status: {
      conditions: [{ type: "Applied", status: "True", reason: "AppliedSuccessful", message: "Manifest has been successfully applied", lastTransitionTime: "2026-11-21T10:00:00Z" }],
      manifestStatuses: [
        {
          identifier: { ordinal: 0, group: "apps", version: "v1", kind: "Deployment", resource: "deployments", namespace: deployment.metadata.namespace, name },
          status: { replicas: 3, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 3, observedGeneration: 3 },
          health: "Healthy",
        },
      ],
    },
  };
}

async function bench() {
  const { freshDatabase } = await import("@flotilla/testkit");
  const { ObjectStore } = await import("@flotilla/store");
  const n = Number(values.works);
  const durationMs = Number(values.duration) * 1000;
  const clients = Number(values.clients);
  const db = await freshDatabase({ max: 16 });
  try {
    const store = new ObjectStore(db.sql);
    const t0 = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < n) await store.create(work(next++) as never);
      }),
    );
    const [{ bytes }] = await db.sql<{ bytes: string }[]>`SELECT sum(length(body::text))::text AS bytes FROM objects WHERE gk = 'work.karmada.io/Work'`;
    console.log(`filled ${n} Works in ${((Date.now() - t0) / 1000).toFixed(1)} s, ${(Number(bytes) / n / 1024).toFixed(1)} KiB each as stored JSON (${(Number(bytes) / 2 ** 20).toFixed(0)} MiB in all)`);

    const rows: string[] = [];
    for (const mode of values.modes!.split(",")) rows.push(await measure(db.url, mode, n, clients, durationMs));
    console.log(`\nlist memory ${new Date().toISOString().slice(0, 10)}: ${n} Works, ${clients} clients listing all Works for ${durationMs / 1000} s, gateway in its own process`);
    console.log("| mode | lists | avg ms per list | RSS idle MiB | RSS median MiB | RSS peak MiB |");
    console.log("|---|---|---|---|---|---|");
    for (const r of rows) console.log(r);
  } finally {
    await db.drop();
  }
}

function status(pid: number): { rss: number; hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(text)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

async function startGateway(dbUrl: string): Promise<{ child: ChildProcess; url: string }> {
  const self = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", self, "--serve", dbUrl], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      const m = /^(http:\/\/\S+)\n/m.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on("exit", (code) => reject(new Error(`gateway exited ${code}`)));
  });
  return { child, url };
}

/** Lists every Work once; returns how many there were. */
async function listAll(url: string, mode: string): Promise<number> {
  const base = `${url}/apis/work.karmada.io/v1alpha1/works`;
  if (mode === "full") {
    const res = await fetch(base, { headers: ADMIN });
    if (res.status !== 200) throw new Error(`GET ${base}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { items: unknown[] }).items.length;
  }
  let count = 0;
  let token = "";
  for (let pages = 0; ; pages++) {
    const res = await fetch(`${base}?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ""}`, { headers: ADMIN });
    if (res.status !== 200) throw new Error(`GET ${base}: ${res.status} ${await res.text()}`);
    const l = (await res.json()) as { items: unknown[]; metadata: { continue?: string } };
    count += l.items.length;
    token = l.metadata.continue ?? "";
    // a gateway that ignores limit answers everything at once, without a continue token
    if (!token || pages > 1000) return count;
  }
}

async function measure(dbUrl: string, mode: string, n: number, clients: number, durationMs: number): Promise<string> {
  const { child, url } = await startGateway(dbUrl);
  try {
    await fetch(`${url}/healthz`);
    await new Promise((r) => setTimeout(r, 1000));
    const idle = status(child.pid!).rss;
    const samples: number[] = [];
    const sampler = setInterval(() => samples.push(status(child.pid!).rss), 100);
    const deadline = Date.now() + durationMs;
    let lists = 0;
    let totalMs = 0;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (Date.now() < deadline) {
          const t = Date.now();
          const got = await listAll(url, mode);
          if (got !== n) throw new Error(`${mode}: listed ${got} Works, expected ${n}`);
          totalMs += Date.now() - t;
          lists++;
        }
      }),
    );
    clearInterval(sampler);
    const peak = status(child.pid!).hwm;
    samples.sort((a, b) => a - b);
    const median = samples[Math.floor(samples.length / 2)] ?? idle;
    return `| ${mode} | ${lists} | ${Math.round(totalMs / Math.max(1, lists))} | ${idle.toFixed(0)} | ${median.toFixed(0)} | ${peak.toFixed(0)} |`;
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
}
