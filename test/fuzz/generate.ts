// Hostile requests for the gateway, generated from a seed: random methods; resource paths with odd
// segments and escapes; bodies of near-valid objects with hostile values spliced in (NUL, lone
// surrogates, wrong types, __proto__/constructor/prototype keys, deep nesting, huge strings),
// random JSON, YAML (anchors, tags, cycles) and garbage bytes; right and wrong content types;
// every patch type aimed at prototypes and at Secret values; gRPC calls with wrong types and
// malformed messages. Pure: the same seed gives the same requests.

/** mulberry32: a small, fast, seedable PRNG. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
}

export interface HttpCase {
  kind: "http";
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** What the generator meant to do, for failure reports. */
  note: string;
}

export type GrpcMethod = "get" | "list" | "create" | "update" | "delete";

export interface GrpcCase {
  kind: "grpc";
  method: GrpcMethod;
  /** A request message in protobuf-es init form, or raw bytes sent as the message. */
  request: Record<string, unknown> | Buffer;
  note: string;
}

export type FuzzCase = HttpCase | GrpcCase;

/** The Secret every run seeds; its value must never appear in a response. */
export const SEEDED_SECRET = { namespace: "fuzz", name: "member-token", token: "fuzz-s3cr3t-token-value" };

export interface Kind {
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

export const KINDS: Kind[] = [
  { apiVersion: "apps/v1", kind: "Deployment", plural: "deployments", namespaced: true },
  { apiVersion: "apps/v1", kind: "StatefulSet", plural: "statefulsets", namespaced: true },
  { apiVersion: "apps/v1", kind: "DaemonSet", plural: "daemonsets", namespaced: true },
  { apiVersion: "batch/v1", kind: "Job", plural: "jobs", namespaced: true },
  { apiVersion: "batch/v1", kind: "CronJob", plural: "cronjobs", namespaced: true },
  { apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true },
  { apiVersion: "v1", kind: "Secret", plural: "secrets", namespaced: true },
  { apiVersion: "v1", kind: "Namespace", plural: "namespaces", namespaced: false },
  { apiVersion: "policy.karmada.io/v1alpha1", kind: "PropagationPolicy", plural: "propagationpolicies", namespaced: true },
  { apiVersion: "policy.karmada.io/v1alpha1", kind: "ClusterPropagationPolicy", plural: "clusterpropagationpolicies", namespaced: false },
  { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", plural: "clusters", namespaced: false },
  { apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", plural: "resourcebindings", namespaced: true },
  { apiVersion: "work.karmada.io/v1alpha1", kind: "Work", plural: "works", namespaced: true },
];

/** Names requests use; the run seeds an object named "web" of every kind (and the Secret "member-token"), so half the requests find one. */
export const SEEDED_NAME = "web";
const NAMES = [SEEDED_NAME, SEEDED_NAME, SEEDED_NAME, SEEDED_NAME, SEEDED_NAME, "d1", "member-token", "cfg", "nginx", "member1"];
export const SEEDED_NAMESPACES = ["default", "fuzz"];
const NAMESPACES = ["default", "fuzz", "karmada-cluster"];

/** Strings that have broken parsers, stores and prototypes somewhere. */
const HOSTILE_STRINGS = [
  "",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udfffy",
  "\ud83d\ude00",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "../../etc/passwd",
  "%00",
  "%zz",
  "'; DROP TABLE objects; --",
  "${jndi:ldap://x}",
  "\\u0000",
  "a".repeat(300),
  "\r\n\t",
  "ä漢字🙂",
  "-1",
  "1e400",
];

const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -0,
  2 ** 31,
  2 ** 53 + 1,
  [],
  {},
  [null],
  { "": "" },
  "\u0000",
  "\ud800",
  "abc",
  "100m",
  "-1",
];

/** Segments for URL paths: escapes that decode badly, NUL, traversal, prototype names. */
const ODD_SEGMENTS = ["%", "%zz", "%0", "%00", "a%00b", "%ED%A0%80", "%C0%AF", "%FF", "..", ".", "%2F", "%2e%2e", "__proto__", "constructor", "prototype", "toString", "a".repeat(2000), "%25", "~", "é", "%F0%9F%98%80", "%u0000", ""];

export const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "APPLICATION/JSON",
  "application/yaml",
  "application/merge-patch+json",
  "application/strategic-merge-patch+json",
  "application/json-patch+json",
  "application/apply-patch+yaml",
  "text/plain",
  "image/png",
  "multipart/form-data; boundary=xyz",
  "application/x-www-form-urlencoded",
  "application/vnd.kubernetes.protobuf",
  "application/cbor",
  "a/b/c",
  ";;;",
  "application/json; charset=latin1",
];

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "PROPFIND", "TRACE", "PURGE"];

export function collection(k: Kind, ns: string): string {
  const base = k.apiVersion.includes("/") ? `/apis/${k.apiVersion}` : `/api/${k.apiVersion}`;
  return k.namespaced && ns ? `${base}/namespaces/${ns}/${k.plural}` : `${base}/${k.plural}`;
}

/** A random JSON value, `depth` levels at most, with hostile leaves now and then. */
function randomJson(r: Rng, depth: number): unknown {
  if (depth <= 0 || r.chance(0.4)) return r.chance(0.5) ? r.pick(HOSTILE_VALUES) : r.pick(HOSTILE_STRINGS);
  if (r.chance(0.5)) return Array.from({ length: r.int(4) }, () => randomJson(r, depth - 1));
  const o: Record<string, unknown> = {};
  for (let i = r.int(4); i > 0; i--) defineKey(o, r.chance(0.2) ? r.pick(HOSTILE_STRINGS) : r.pick(["a", "spec", "metadata", "name", "data", "replicas"]), randomJson(r, depth - 1));
  return o;
}

/** Sets `key` as an own data property even when it is "__proto__", as JSON.parse would. */
function defineKey(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** `levels` of nesting around `inner`: objects or arrays. */
function nest(levels: number, inner: unknown, arrays: boolean): unknown {
  let v = inner;
  for (let i = 0; i < levels; i++) v = arrays ? [v] : { a: v };
  return v;
}

/** A valid object of kind `k` (the fuzz mutates it). */
export function validObject(k: Kind, name: string, ns: string): Record<string, unknown> {
  const metadata: Record<string, unknown> = { name, ...(k.namespaced ? { namespace: ns } : {}), labels: { app: "fuzz" } };
  const pod = { metadata: { labels: { app: "fuzz" } }, spec: { containers: [{ name: "c", image: "nginx", resources: { requests: { cpu: "100m", memory: "64Mi" } } }] } };
  const base = { apiVersion: k.apiVersion, kind: k.kind, metadata };
  switch (k.kind) {
    case "Deployment":
    case "StatefulSet":
      return { ...base, spec: { replicas: 2, selector: { matchLabels: { app: "fuzz" } }, template: pod } };
    case "DaemonSet":
      return { ...base, spec: { selector: { matchLabels: { app: "fuzz" } }, template: pod } };
    case "Job":
      return { ...base, spec: { parallelism: 1, completions: 2, template: pod } };
    case "CronJob":
      return { ...base, spec: { schedule: "* * * * *", jobTemplate: { spec: { template: pod } } } };
    case "ConfigMap":
      return { ...base, data: { a: "1" } };
    case "Secret":
      return { ...base, type: "Opaque", stringData: { token: "t" } };
    case "PropagationPolicy":
    case "ClusterPropagationPolicy":
      return { ...base, spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web" }], placement: { clusterAffinity: { clusterNames: ["member1"] } } } };
    case "Cluster":
      return { ...base, spec: { apiEndpoint: "https://127.0.0.1:6443", syncMode: "Push" } };
    case "ResourceBinding":
      return { ...base, spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name: "web" }, replicas: 1 } };
    case "Work":
      return { ...base, spec: { workload: { manifests: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "m" } }] } } };
    default:
      return base;
  }
}

/** Field paths worth hitting in a mutation (some exist only for some kinds). */
const MUTATION_PATHS = [
  ["metadata", "name"],
  ["metadata", "namespace"],
  ["metadata", "labels"],
  ["metadata", "labels", "app"],
  ["metadata", "annotations"],
  ["metadata", "generateName"],
  ["metadata", "finalizers"],
  ["metadata", "ownerReferences"],
  ["metadata", "resourceVersion"],
  ["metadata", "uid"],
  ["metadata", "creationTimestamp"],
  ["metadata"],
  ["apiVersion"],
  ["kind"],
  ["spec"],
  ["spec", "replicas"],
  ["spec", "parallelism"],
  ["spec", "completions"],
  ["spec", "selector"],
  ["spec", "selector", "matchLabels"],
  ["spec", "selector", "matchExpressions"],
  ["spec", "template"],
  ["spec", "template", "spec", "containers"],
  ["spec", "template", "spec", "containers", "0", "resources", "requests", "cpu"],
  ["spec", "template", "spec", "containers", "0", "resources", "limits", "memory"],
  ["spec", "template", "spec", "nodeSelector"],
  ["spec", "template", "spec", "tolerations"],
  ["spec", "jobTemplate", "spec", "template", "spec", "containers", "0", "resources", "requests"],
  ["spec", "placement", "clusterAffinity", "clusterNames"],
  ["spec", "resourceSelectors", "0", "kind"],
  ["spec", "apiEndpoint"],
  ["spec", "taints"],
  ["spec", "workload", "manifests", "0"],
  ["data"],
  ["data", "token"],
  ["stringData"],
  ["status"],
  ["__proto__"],
  ["metadata", "__proto__", "polluted"],
  ["spec", "constructor", "prototype", "polluted"],
];

function setPath(o: unknown, path: string[], value: unknown): void {
  let cur = o as Record<string, unknown>;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i]!;
    const next = Object.getOwnPropertyDescriptor(cur, k)?.value;
    if (typeof next !== "object" || next === null) {
      const made = /^\d+$/.test(path[i + 1]!) ? [] : {};
      defineKey(cur, k, made);
      cur = made as Record<string, unknown>;
    } else cur = next as Record<string, unknown>;
  }
  defineKey(cur, path[path.length - 1]!, value);
}

/** A value to splice into a valid object: hostile scalars, random JSON, deep nesting, huge strings. */
function hostileValue(r: Rng): unknown {
  const roll = r.int(10);
  if (roll < 4) return r.pick(HOSTILE_VALUES);
  if (roll < 6) return r.pick(HOSTILE_STRINGS);
  if (roll < 8) return randomJson(r, 4);
  if (roll < 9) return nest(r.pick([40, 44, 45, 46, 50, 99, 101, 3000]), r.pick(HOSTILE_VALUES), r.chance(0.5));
  return r.chance(0.8) ? "x".repeat(r.pick([1000, 70_000, 300_000])) : "y".repeat(3 * 1024 * 1024 + 10);
}

/** A valid object with up to three hostile values spliced in (a quarter of them none). */
function mutated(r: Rng, k: Kind, name: string, ns: string): unknown {
  const o = validObject(k, name, ns);
  for (let i = r.int(4); i > 0; i--) setPath(o, r.pick(MUTATION_PATHS), hostileValue(r));
  return o;
}

/** JSON text with `__proto__` keys written literally (JSON.stringify of a parsed object keeps them). */
function toJson(v: unknown): string {
  return JSON.stringify(v);
}

function toYaml(r: Rng, v: unknown): string {
  const roll = r.int(8);
  switch (roll) {
    case 0:
      return "a: &a [*a]\nmetadata: {name: cyc}";
    case 1:
      return "%YAML 1.1\n---\nmetadata: {name: y11}\nspec: {t: 2001-12-14, b: !!binary aGVsbG8=, s: !!set {a, b}, m: {<<: {x: 1}}}";
    case 2:
      return "metadata: {name: inf}\nspec: {x: .inf, y: .nan}";
    case 3:
      return `__proto__: {polluted: 1}\nmetadata: {name: p, labels: {constructor: x}}`;
    case 4:
      return r.chance(0.5) ? "a: " + "[".repeat(r.pick([50, 120, 3000, 100_000])) + "]" : "- ".repeat(r.pick([99, 5000, 500_000])) + "x";
    case 5:
      return "x: &x [a,a,a,a,a,a,a,a,a,a]\n" + Array.from({ length: 12 }, (_, i) => `x${i + 1}: &x${i + 1} [*x${i},*x${i},*x${i},*x${i},*x${i},*x${i},*x${i},*x${i},*x${i},*x${i}]`).join("\n");
    case 6:
      return "--- a\n--- b\n";
    default:
      // JSON is YAML; NUL and surrogates as YAML escapes
      return r.chance(0.5) ? toJson(v) : `metadata: {name: "a\\0b"}\ndata: {k: "\\ud800"}`;
  }
}

function garbage(r: Rng): Buffer {
  const roll = r.int(6);
  if (roll === 0) return Buffer.from(Array.from({ length: r.int(200) }, () => r.int(256)));
  if (roll === 1) return Buffer.from("{\"metadata\": {\"name\": \"x\"");
  if (roll === 2) return Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]); // {"a":"<invalid utf-8>"}
  if (roll === 3) return Buffer.from("[".repeat(100_000) + "]".repeat(100_000));
  if (roll === 4) return Buffer.from("\ufeff{}");
  return Buffer.from("null");
}

/** A patch document of a random type; many go for prototypes or for the seeded Secret's value. */
function patchBody(r: Rng): { contentType: string; body: string } {
  const type = r.int(4);
  const protoPaths = ["/__proto__/polluted", "/constructor/prototype/polluted", "/metadata/__proto__/polluted", "/prototype", "/metadata/labels/__proto__", "/spec/template/constructor"];
  const secretPaths = ["/data/token", "/stringData/token", "/data"];
  if (type === 0) {
    const ops = Array.from({ length: 1 + r.int(3) }, () => {
      const op = r.pick(["add", "remove", "replace", "move", "copy", "test", "bogus", 7]);
      const path = r.pick([...protoPaths, ...secretPaths, "/metadata/labels/x", "/spec/replicas", "", "nope", "/spec/template/spec/containers/-", "/spec/template/spec/containers/abc", "/metadata/annotations/leak"]);
      const o: Record<string, unknown> = { op, path };
      if (r.chance(0.8)) o.value = r.chance(0.3) ? SEEDED_SECRET.token : r.chance(0.3) ? Buffer.from(SEEDED_SECRET.token).toString("base64") : hostileValue(r);
      if (op === "copy" || op === "move" || r.chance(0.1)) o.from = r.pick([...secretPaths, ...protoPaths, "/metadata/name", 5]);
      if (r.chance(0.05)) return r.pick(HOSTILE_VALUES);
      return o;
    });
    return { contentType: "application/json-patch+json", body: r.chance(0.05) ? toJson({ op: "add" }) : toJson(ops) };
  }
  const doc: Record<string, unknown> = {};
  setPath(doc, r.pick(MUTATION_PATHS), hostileValue(r));
  if (type === 2 && r.chance(0.5)) defineKey(doc, r.pick(["$setElementOrder/containers", "$deleteFromPrimitiveList/finalizers", "$retainKeys", "$patch"]), r.pick(HOSTILE_VALUES));
  const contentType = ["", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"][type]!;
  return { contentType, body: type === 3 && r.chance(0.5) ? toYaml(r, doc) : toJson(doc) };
}

function query(r: Rng): string {
  const params = [
    () => `labelSelector=${r.pick(["app%3Dfuzz", "app%20in%20(a,b)", "%zz", "a%00", "!!!", "a=" + "b".repeat(300), "%ED%A0%80", "x,,y"])}`,
    () => `limit=${r.pick(["1", "0", "-1", "abc", "1e99", "99999999999999999999", "%00"])}`,
    () => `continue=${r.pick(["abc", "eyJ9", Buffer.from(JSON.stringify({ rv: "1", key: ["a\u0000", "b"] })).toString("base64url"), Buffer.from("{\"rv\":\"x\"}").toString("base64url"), "%00"])}`,
    () => `resourceVersion=${r.pick(["0", "-1", "abc", "99999999999999999999", "1%00"])}`,
    () => `fieldSelector=${r.pick(["metadata.name%3Dx", "%00"])}`,
    () => `dryRun=All`,
    () => `__proto__[polluted]=1`,
    () => `constructor[prototype][polluted]=1`,
    () => `a=%zz&a=%00`,
  ];
  if (!r.chance(0.4)) return "";
  return "?" + Array.from({ length: 1 + r.int(3) }, () => r.pick(params)()).join("&");
}

function httpCase(r: Rng): HttpCase {
  const k = r.pick(KINDS);
  const ns = r.chance(0.9) ? r.pick(NAMESPACES) : r.pick(ODD_SEGMENTS);
  const name = r.chance(0.85) ? r.pick(NAMES) : r.pick(ODD_SEGMENTS);
  let path = collection(k, ns);
  const roll = r.int(20);
  let method = r.pick(METHODS);
  if (roll < 12) method = r.pick(["POST", "PUT", "PATCH", "GET", "DELETE"]);
  if (method !== "POST" || r.chance(0.1)) path += `/${name}`;
  if (r.chance(0.08)) path += r.pick(["/status", "/scale", "/%zz", "/a/b/c"]);
  if (r.chance(0.08)) path = r.pick(["/", "/api", "/apis", "/apis/apps", "/apis/nope.io/v1/things", "/openapi.json", "/healthz", "/%", "/apis/%zz/v1", "/api/v1/%00", "//api//v1", "/apis/scheduling.flotilla.io/v1alpha1/nope"]) + (r.chance(0.5) ? "/" + r.pick(ODD_SEGMENTS) : "");
  let q = query(r);
  // a watch ends on its own (timeoutSeconds) so the fuzz does not wait on it
  if (method === "GET" && r.chance(0.05)) q = (q ? q + "&" : "?") + "watch=true&timeoutSeconds=1";
  const headers: Record<string, string> = {};
  let body: Buffer | undefined;
  let note = `${k.kind}`;
  if (["POST", "PUT", "PATCH", "DELETE"].includes(method) || r.chance(0.05)) {
    const b = r.int(10);
    if (method === "PATCH" && b < 6) {
      const p = patchBody(r);
      headers["content-type"] = r.chance(0.9) ? p.contentType : r.pick(CONTENT_TYPES);
      body = Buffer.from(p.body);
      note += " patch";
    } else if (b < 7) {
      const obj = mutated(r, k, name, ns);
      const yaml = r.chance(0.2);
      headers["content-type"] = r.chance(0.85) ? (yaml ? "application/yaml" : "application/json") : r.pick(CONTENT_TYPES);
      body = Buffer.from(yaml ? toYaml(r, obj) : toJson(method === "DELETE" && r.chance(0.5) ? { preconditions: { uid: r.pick(HOSTILE_VALUES.concat(HOSTILE_STRINGS)), resourceVersion: r.pick(HOSTILE_VALUES.concat(HOSTILE_STRINGS)) } } : obj));
      note += " object";
    } else if (b < 9) {
      headers["content-type"] = r.pick(CONTENT_TYPES);
      body = garbage(r);
      note += " garbage";
    } else if (r.chance(0.5)) {
      headers["content-type"] = r.pick(CONTENT_TYPES);
      note += " no body";
    } else {
      body = Buffer.from(toJson(mutated(r, k, name, ns)));
      note += " no content type";
    }
  }
  return { kind: "http", method, path: path + q, headers, body, note };
}

function grpcKey(r: Rng): Record<string, unknown> {
  const k = r.pick(KINDS);
  return {
    apiVersion: r.chance(0.9) ? k.apiVersion : r.pick(HOSTILE_STRINGS),
    kind: r.chance(0.9) ? k.kind : r.pick(HOSTILE_STRINGS),
    namespace: r.chance(0.85) ? r.pick(NAMESPACES) : r.pick(HOSTILE_STRINGS),
    name: r.chance(0.85) ? r.pick(NAMES) : r.pick(HOSTILE_STRINGS),
  };
}

function grpcCase(r: Rng): GrpcCase {
  const method = r.pick(["get", "list", "create", "update", "delete"] as const);
  if (r.chance(0.1)) {
    const bytes = Buffer.from(Array.from({ length: r.int(64) }, () => r.int(256)));
    return { kind: "grpc", method, request: bytes, note: "random bytes" };
  }
  switch (method) {
    case "get":
    case "delete":
      return { kind: "grpc", method, request: r.chance(0.05) ? {} : { key: grpcKey(r) }, note: "key" };
    case "list":
      return { kind: "grpc", method, request: { key: grpcKey(r), labelSelector: r.pick(["", "app=fuzz", "%zz", "a\u0000", "!!"]), limit: BigInt(r.pick([0, 1, 5, -1, 2 ** 40])), continue: r.pick(["", "abc", "\u0000"]) }, note: "list" };
    default: {
      if (r.chance(0.2)) {
        // a typed object: its fields are typed by the proto, so only strings can be hostile
        const value = { metadata: { name: r.pick([...NAMES, ...HOSTILE_STRINGS]), namespace: r.pick([...NAMESPACES, ...HOSTILE_STRINGS]), labels: { [r.pick(HOSTILE_STRINGS)]: r.pick(HOSTILE_STRINGS) } }, spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: r.pick(["Deployment", ...HOSTILE_STRINGS]) }] } };
        return { kind: "grpc", method, request: { object: { object: { case: "propagationPolicy", value } }, status: false }, note: "typed PropagationPolicy" };
      }
      const k = r.pick(KINDS);
      const obj = mutated(r, k, r.chance(0.8) ? r.pick(NAMES) : r.pick(HOSTILE_STRINGS), r.pick(NAMESPACES)) as Record<string, unknown>;
      if (r.chance(0.3)) obj.apiVersion = r.pick(HOSTILE_VALUES);
      if (r.chance(0.2)) obj.kind = r.pick(HOSTILE_VALUES);
      return { kind: "grpc", method, request: { object: { object: { case: "template", value: obj } }, status: r.chance(0.2) }, note: `${k.kind} template` };
    }
  }
}

/**
 * Known ways in, aimed at the seeded objects so that they land even in a short run: patches
 * through prototypes, Secret values read through patch operations, values that poison a
 * workload, names no object can have.
 */
function targetedCase(r: Rng): HttpCase {
  const k = r.pick(KINDS.filter((x) => x.namespaced));
  const obj = `${collection(k, "default")}/${SEEDED_NAME}`;
  const secret = `/api/v1/namespaces/${SEEDED_SECRET.namespace}/secrets/${SEEDED_SECRET.name}`;
  const proto = r.pick(["/__proto__/polluted", "/constructor/prototype/polluted", "/metadata/__proto__/polluted", "/spec/__proto__"]);
  const json = (method: string, path: string, contentType: string, body: unknown, note: string): HttpCase => ({ kind: "http", method, path, headers: { "content-type": contentType }, body: Buffer.from(typeof body === "string" ? body : JSON.stringify(body)), note });
  switch (r.int(7)) {
    case 0: {
      const op = r.pick(["add", "replace", "copy", "move"]);
      return json("PATCH", obj, "application/json-patch+json", [{ op, path: op === "copy" || op === "move" ? "/metadata/labels/x" : proto, from: proto, value: { polluted: 1 } }], `json patch ${op} via prototype`);
    }
    case 1: {
      const type = r.pick(["application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"]);
      return json("PATCH", obj, type, `{"${r.pick(["__proto__", "constructor", "metadata"])}": {"__proto__": {"polluted": 1}, "prototype": {"polluted": 1}}}`, "merge patch via prototype");
    }
    case 2: {
      const guess = r.pick([SEEDED_SECRET.token, Buffer.from(SEEDED_SECRET.token).toString("base64"), "bm9wZQ=="]);
      const ops = r.pick([
        [{ op: "test", path: "/data/token", value: guess }],
        [{ op: "add", path: "/metadata/annotations", value: {} }, { op: "copy", from: "/data/token", path: "/metadata/annotations/leak" }],
        [{ op: "move", from: "/data/token", path: "/data/moved" }],
        [{ op: "copy", from: "/data", path: "/stringData" }],
      ]);
      return json("PATCH", secret, "application/json-patch+json", ops, "Secret value through a patch");
    }
    case 3: {
      const bad = r.pick([true, [], {}, "lots", -1, null, "1e400"]);
      const body = validObject(KINDS[0]!, `poison-${r.int(1000)}`, "default") as { spec: { template: { spec: { containers: Array<Record<string, unknown>> } } } };
      body.spec.template.spec.containers[0]!.resources = { requests: { cpu: bad }, limits: { memory: bad } };
      return json("POST", collection(KINDS[0]!, "default"), "application/json", body, "workload with a bad quantity");
    }
    case 4:
      return { kind: "http", method: r.pick(["GET", "DELETE", "PUT", "PATCH"]), path: `${collection(k, r.pick(["default", "a%00"]))}/${r.pick(["we%00b", SEEDED_NAME])}`, headers: {}, note: "NUL in the URL" };
    case 5:
      return json("PUT", obj, "application/json", { ...validObject(k, SEEDED_NAME, "default"), metadata: { name: SEEDED_NAME, namespace: "default", resourceVersion: r.pick(["abc", "-1", "99999999999999999999", "1e3"]) } }, "resourceVersion that is no number");
    default:
      return json("POST", collection(k, "default"), "application/json", `{"metadata":{"name":"deep"},"spec":${'{"a":'.repeat(3000)}1${"}".repeat(3000)}}`, "nested 3000 deep");
  }
}

/** The next case of a run: gRPC calls now and then (when there is a gRPC address), known ways in, HTTP otherwise. */
export function generateCase(r: Rng, grpc: boolean): FuzzCase {
  if (grpc && r.chance(0.15)) return grpcCase(r);
  return r.chance(0.1) ? targetedCase(r) : httpCase(r);
}
