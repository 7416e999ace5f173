// The gateway runner's load generator, a process of its own (autocannon): one kind of request for
// a fixed time at a fixed number of connections, each request naming another object. Prints the
// result as JSON on stdout.
//   node --import tsx test/load/gateway/cannon.ts '<CannonOptions as JSON>'
import { createRequire } from "node:module";

export interface CannonOptions {
  url: string;
  token: string;
  kind: "get" | "list" | "post";
  connections: number;
  durationSeconds: number;
  /** Deployments app-0..app-(objects-1) exist, in namespaces ns-(i % namespaces). */
  objects: number;
  namespaces: number;
  /** Page size of the lists. */
  limit: number;
}

export interface CannonResult {
  /** Seconds the run lasted. */
  seconds: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Latency in ms, over every response. */
  p50: number;
  p99: number;
  max: number;
}

interface AutocannonRequest {
  method?: string;
  path?: string;
  body?: string;
  headers?: Record<string, string>;
}
interface AutocannonResult {
  duration: number;
  "2xx": number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latency: { p50: number; p99: number; max: number };
}
type Autocannon = (o: object) => Promise<AutocannonResult>;

const o = JSON.parse(process.argv[2] ?? "{}") as CannonOptions;
const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;
const pick = () => Math.floor(Math.random() * o.objects);
let posted = 0;

function deployment(name: string) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, labels: { app: name } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "app", image: "nginx:1.25", resources: { requests: { cpu: "100m", memory: "128Mi" } } }] } },
    },
  };
}

const setupRequest = (req: AutocannonRequest): AutocannonRequest => {
  if (o.kind === "get") {
    const i = pick();
    return { ...req, method: "GET", path: `/apis/apps/v1/namespaces/ns-${i % o.namespaces}/deployments/app-${i}` };
  }
  if (o.kind === "list") return { ...req, method: "GET", path: `/apis/apps/v1/namespaces/ns-${pick() % o.namespaces}/deployments?limit=${o.limit}` };
  const n = posted++;
  return { ...req, method: "POST", path: `/apis/apps/v1/namespaces/ns-${n % o.namespaces}/deployments`, body: JSON.stringify(deployment(`post-${process.pid}-${n}`)) };
};

const r = await autocannon({
  url: o.url,
  connections: o.connections,
  duration: o.durationSeconds,
  headers: { authorization: `Bearer ${o.token}`, "content-type": "application/json", accept: "application/json" },
  requests: [{ setupRequest }],
});
const out: CannonResult = { seconds: r.duration, ok: r["2xx"], non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts, p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max };
process.stdout.write(JSON.stringify(out));
