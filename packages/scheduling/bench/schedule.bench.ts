/**
 * Scheduling throughput over 100 clusters with region + cluster spread constraints.
 *
 *   node --conditions=source --import tsx packages/scheduling/bench/schedule.bench.ts [iterations]
 *
 * Prints schedules/s (one core, sequential), p50/p99 latency per schedule and heap use.
 */
import type { AnyResourceBinding, Cluster, Placement } from "@flotilla/api";
import { divided, makeBinding, makeCluster } from "../src/fixtures.js";
import { schedule } from "../src/index.js";

const REGIONS = 5;
const CLUSTERS = 100;
const iterations = Number(process.argv[2] ?? 200_000);

function clusters(): Cluster[] {
  const out: Cluster[] = [];
  for (let i = 0; i < CLUSTERS; i++) {
    const region = `region-${i % REGIONS}`;
    const c = makeCluster(`member-${String(i).padStart(3, "0")}`, {
      labels: { env: i % 10 === 0 ? "staging" : "prod", tier: `t${i % 3}` },
      provider: i % 2 === 0 ? "aws" : "gcp",
      region,
      zones: [`${region}-a`, `${region}-b`],
      pods: 110 + (i % 7) * 20,
      cpu: `${16 + (i % 5) * 8}`,
      memory: `${64 + (i % 4) * 32}Gi`,
      allocated: { pods: `${(i * 13) % 90}`, cpu: `${(i * 1700) % 12000}m`, memory: `${(i * 3) % 40}Gi` },
      allocating: { pods: "2", cpu: "500m", memory: "1Gi" },
      // A few tainted clusters exercise the filter's reject path.
      ...(i % 17 === 0 ? { taints: [{ key: "cluster.karmada.io/not-ready", effect: "NoSchedule" }] } : {}),
    });
    out.push(c);
  }
  return out;
}

const spread = (regionMin: number, regionMax: number, clusterMin: number, clusterMax: number): Placement["spreadConstraints"] => [
  { spreadByField: "region", minGroups: regionMin, maxGroups: regionMax },
  { spreadByField: "cluster", minGroups: clusterMin, maxGroups: clusterMax },
];
const affinity = { labelSelector: { matchLabels: { env: "prod" } }, exclude: ["member-099"] };
const requirements = { cpu: "250m", memory: "512Mi" };

function bindings(): AnyResourceBinding[] {
  return [
    // First schedule, dynamic weight.
    makeBinding({
      name: "web",
      uid: "7f3e1c2a-0000-4000-8000-000000000001",
      replicas: 30,
      resourceRequest: requirements,
      placement: { clusterAffinity: affinity, replicaScheduling: divided.dynamic(), spreadConstraints: spread(2, 3, 4, 10) },
    }),
    // Steady scale-up of an existing dynamic placement.
    makeBinding({
      name: "api",
      uid: "7f3e1c2a-0000-4000-8000-000000000002",
      replicas: 24,
      resourceRequest: requirements,
      clusters: { "member-001": 4, "member-002": 4, "member-006": 4 },
      placement: { clusterAffinity: affinity, replicaScheduling: divided.dynamic(), spreadConstraints: spread(2, 3, 3, 8) },
    }),
    // Aggregated.
    makeBinding({
      name: "batch",
      uid: "7f3e1c2a-0000-4000-8000-000000000003",
      replicas: 40,
      resourceRequest: requirements,
      placement: { replicaScheduling: divided.aggregated(), spreadConstraints: spread(1, 2, 2, 6) },
    }),
    // Duplicated across a few clusters.
    makeBinding({
      name: "agent",
      uid: "7f3e1c2a-0000-4000-8000-000000000004",
      replicas: 2,
      resourceRequest: requirements,
      placement: { clusterAffinity: affinity, replicaScheduling: divided.duplicated(), spreadConstraints: spread(3, 5, 5, 5) },
    }),
  ];
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const cs = clusters();
const bs = bindings();

// Sanity: every benchmark binding schedules successfully.
for (const b of bs) {
  const r = schedule({ binding: b, clusters: cs });
  const name = b.metadata.name ?? "";
  if (r.error) throw new Error(`${name}: ${r.error.message}`);
  console.log(`${name.padEnd(18)} -> ${r.clusters.map((t) => `${t.name}:${t.replicas}`).join(" ")}`);
}

// Warm up the JIT.
for (let i = 0; i < 20_000; i++) schedule({ binding: bs[i % bs.length], clusters: cs });

globalThis.gc?.();
const heapBefore = process.memoryUsage().heapUsed;
let heapPeak = heapBefore;
const lat = new Float64Array(iterations);
let failures = 0;
const cpuStart = process.cpuUsage();
const start = process.hrtime.bigint();
for (let i = 0; i < iterations; i++) {
  const t0 = performance.now();
  const r = schedule({ binding: bs[i % bs.length], clusters: cs });
  lat[i] = performance.now() - t0;
  if (r.error) failures++;
  if ((i & 0x3fff) === 0) heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
}
const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
const cpu = process.cpuUsage(cpuStart);
const cpuMs = (cpu.user + cpu.system) / 1000;
heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
const latRaw = lat.slice();
lat.sort();

// Per binding kind: every bs.length-th sample belongs to the same binding.
const perBinding = bs.map((b, k) => {
  const xs = new Float64Array(Math.ceil((iterations - k) / bs.length));
  for (let i = k, j = 0; i < iterations; i += bs.length, j++) xs[j] = latRaw[i];
  xs.sort();
  return `${(b.metadata.name ?? "").replace(/-deployment$/, "")} ${(percentile(xs, 50) * 1000).toFixed(1)} µs`;
});

// A machine reference point, to compare runs across hosts.
const refMap = new Map<string, number>();
for (let i = 0; i < 1000; i++) refMap.set(`k${i}`, i);
const refKeys = [...refMap.keys()];
let refSum = 0;
const refStart = performance.now();
for (let r = 0; r < 5000; r++) for (let i = 0; i < 1000; i++) refSum += refMap.get(refKeys[i])!;
const mapGetNs = ((performance.now() - refStart) / 5e6) * 1e6;

const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;
console.log(`\n${iterations} schedules over ${CLUSTERS} clusters (${REGIONS} regions), spread by region + cluster, ${failures} failures`);
console.log(
  `throughput   ${Math.round(iterations / (elapsedMs / 1000)).toLocaleString("en-US")} schedules/s wall-clock, ` +
    `${Math.round(iterations / (cpuMs / 1000)).toLocaleString("en-US")} schedules per CPU-second (process CPU ${(cpuMs / elapsedMs).toFixed(2)}× wall)`,
);
console.log(`latency      p50 ${(percentile(lat, 50) * 1000).toFixed(1)} µs   p99 ${(percentile(lat, 99) * 1000).toFixed(1)} µs   max ${(lat[lat.length - 1] * 1000).toFixed(1)} µs`);
console.log(`p50 per kind ${perBinding.join(", ")}`);
console.log(`heap         before ${mib(heapBefore)}   peak ${mib(heapPeak)}   after ${mib(process.memoryUsage().heapUsed)}`);
console.log(`reference    Map#get ${mapGetNs.toFixed(1)} ns on this host (checksum ${refSum % 7})`);
