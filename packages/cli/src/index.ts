import { readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import { Command, CommanderError, Option } from "commander";
import { parseAllDocuments, stringify } from "yaml";
import { KARMADA, type AnyResourceBinding, type Cluster, type KubeObject } from "@flotilla/api";
import { parseDuration } from "@flotilla/config";
import { ApiError, GatewayClient, TABLE_ACCEPT, parseAnswer } from "./client.js";
import { KubeconfigError, kubeconfigPaths, parseKubeconfig, resolveConnection, type Connection } from "./logic/kubeconfig.js";
import { builtinResource, findResource, memberPath, proxyPath, resourceName, type DiscoveryList, type MemberResource } from "./logic/resources.js";
import { mergeMemberTables, renderTable, serverTable, type ServerTable } from "./logic/table.js";
import { CORDON_TAINT, TaintError, applyTaints, parseTaints, type Taint, type TaintChanges } from "./logic/taints.js";
import { describeBinding } from "./logic/describe.js";
import { ExplainError, explainBinding, explainSimulation, explainTarget, type BindingRef, type SimulationStatus } from "./logic/explain.js";
import { SIMULATIONS_PATH, SimulateError, parseNames, policySimulation } from "./logic/simulate.js";
import { FAILURE_SIMULATIONS_PATH, SimulateFailureError, failureSimulation, failureSimulationTables, type FailureSimulationStatus } from "./logic/simulate-failure.js";
import { topClusters } from "./logic/top.js";
import { historyTable, type PlacementChangeList } from "./logic/history.js";
import { RegisterError, agentEnv, agentManifest, agentServiceAccount } from "./logic/register.js";
import { applyAgentIdentity, readAgentObjects } from "./register.js";

export { registerAgent } from "./register.js";
import { CREDENTIAL_NAMESPACE, joinObjects, parseLabels } from "./logic/join.js";

/** Where the program reads and writes: the process's, or a test's. */
export interface Io {
  out(s: string): void;
  err(s: string): void;
  env: Record<string, string | undefined>;
  readFile(path: string): Promise<string>;
  /** Writes a secret file (mode 0600). */
  writeFile(path: string, text: string): Promise<void>;
  now(): Date;
  sleep(ms: number): Promise<void>;
}

const processIo: Io = {
  out: (s) => void process.stdout.write(s),
  err: (s) => void process.stderr.write(s),
  env: process.env,
  readFile: (p) => readFile(p, "utf8"),
  writeFile: (p, t) => writeFile(p, t, { mode: 0o600 }),
  now: () => new Date(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/** A failure the user can act on: printed as `error: <message>`, exit code 1. */
export class CliError extends Error {
  override readonly name = "CliError";
}

const CLUSTERS = "/apis/cluster.karmada.io/v1alpha1/clusters";
const AGENT_NS = "karmada-cluster";
/** Annotation Karmada's multi-cluster views put on an object read from a member. */
const FROM_CLUSTER = "resource.karmada.io/cached-from-cluster";

interface Globals {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  server?: string;
  token?: string;
}

/** The connection of the kubeconfig (and flags), with its token and CA files read. */
async function connect(io: Io, g: Globals): Promise<GatewayClient> {
  const paths = kubeconfigPaths(g.kubeconfig, io.env.KUBECONFIG, io.env.HOME ?? os.homedir());
  const files = [];
  for (const p of paths) {
    let text: string;
    try {
      text = await io.readFile(p);
    } catch (e) {
      // kubectl skips missing files of a KUBECONFIG list, but not the one --kubeconfig names
      if (g.kubeconfig || (e as { code?: string }).code !== "ENOENT") throw new KubeconfigError(`cannot read the kubeconfig ${p}: ${(e as Error).message}`);
      continue;
    }
    files.push(parseKubeconfig(text, p));
  }
  const conn = resolveConnection(files, { context: g.context, server: g.server, token: g.token, namespace: g.namespace });
  return new GatewayClient(await readSecrets(io, conn));
}

async function readSecrets(io: Io, conn: Connection): Promise<Connection & { ca?: string }> {
  const read = async (p: string, what: string) => {
    try {
      return await io.readFile(p);
    } catch (e) {
      throw new KubeconfigError(`cannot read the ${what} ${p}: ${(e as Error).message}`);
    }
  };
  return {
    ...conn,
    ...(conn.tokenFile ? { token: (await read(conn.tokenFile, "token file")).trim() } : {}),
    ...(conn.caData ? { ca: conn.caData } : conn.caFile ? { ca: await read(conn.caFile, "certificate authority") } : {}),
  };
}

const print = (io: Io, output: string | undefined, data: unknown) => io.out(output === "json" ? JSON.stringify(data, null, 4) + "\n" : stringify(data));

/** The member names -C gives, else every Cluster. */
async function targetClusters(gw: GatewayClient, flag: string | undefined): Promise<string[]> {
  if (flag) {
    const names = flag.split(",").map((s) => s.trim()).filter(Boolean);
    if (!names.length) throw new CliError("--clusters names no cluster");
    return names;
  }
  const list = await gw.json<{ items: Cluster[] }>("GET", CLUSTERS);
  return list.items.map((c) => c.metadata.name ?? "").sort();
}

/** The resource a kind argument names: a built-in kind, else from the first reachable member's discovery. */
async function resolveResource(gw: GatewayClient, arg: string, clusters: readonly string[]): Promise<MemberResource> {
  const known = builtinResource(arg);
  if (known) return known;
  for (const c of clusters) {
    try {
      const lists: DiscoveryList[] = [await gw.json<DiscoveryList>("GET", proxyPath(c, "/api/v1"))];
      const groups = await gw.json<{ groups: Array<{ preferredVersion?: { groupVersion: string } }> }>("GET", proxyPath(c, "/apis"));
      for (const g of groups.groups) if (g.preferredVersion) lists.push(await gw.json<DiscoveryList>("GET", proxyPath(c, `/apis/${g.preferredVersion.groupVersion}`)));
      const found = findResource(arg, lists);
      if (found) return found;
      break;
    } catch {
      // that member cannot say: ask the next
    }
  }
  throw new CliError(`the server doesn't have a resource type ${JSON.stringify(arg)}`);
}

interface GetOptions {
  clusters?: string;
  allNamespaces?: boolean;
  output?: string;
  selector?: string;
  noHeaders?: boolean;
}

/** `get clusters`: the control plane's Clusters, as the gateway prints them. */
async function getClusters(io: Io, gw: GatewayClient, name: string | undefined, o: GetOptions): Promise<number> {
  const path = `${CLUSTERS}${name ? `/${encodeURIComponent(name)}` : ""}${o.selector ? `?labelSelector=${encodeURIComponent(o.selector)}` : ""}`;
  if (o.output === "yaml" || o.output === "json") {
    print(io, o.output, await gw.json("GET", path));
    return 0;
  }
  const t = await gw.json<ServerTable>("GET", path, { accept: TABLE_ACCEPT });
  if (!t.rows.length) {
    io.err("No resources found\n");
    return 0;
  }
  io.out(renderTable(serverTable(t, { wide: o.output === "wide" }), { noHeaders: o.noHeaders }));
  return 0;
}

/** `get <kind> [name]` across members through the cluster proxy, with a CLUSTER column. */
async function getFromMembers(io: Io, gw: GatewayClient, kind: string, name: string | undefined, o: GetOptions): Promise<number> {
  const clusters = await targetClusters(gw, o.clusters);
  const res = await resolveResource(gw, kind, clusters);
  const namespace = res.namespaced && !o.allNamespaces ? gw.conn.namespace : undefined;
  if (name && o.allNamespaces && res.namespaced) throw new CliError("a resource cannot be retrieved by name across all namespaces");
  const table = o.output !== "yaml" && o.output !== "json";
  const path = memberPath(res, { namespace, name, query: { labelSelector: o.selector } });
  const answers = await Promise.all(clusters.map(async (cluster) => ({ cluster, answer: await gw.send("GET", proxyPath(cluster, path), { accept: table ? TABLE_ACCEPT : "application/json" }).catch((e: unknown) => e as Error) })));
  let failed = false;
  const notFound: string[] = [];
  const tables: Array<{ cluster: string; table: ServerTable }> = [];
  const objects: KubeObject[] = [];
  for (const { cluster, answer } of answers) {
    try {
      if (answer instanceof Error) throw answer;
      if (answer.status === 404 && name) {
        const s = parseJsonOr(answer.text);
        // the object is not on this member (a missing cluster is a 404 too, and an error)
        if (s?.details?.kind !== "clusters") {
          notFound.push(cluster);
          continue;
        }
      }
      const body = parseAnswer<ServerTable & { items?: KubeObject[] } & KubeObject>(answer, `GET ${path}`);
      if (table) tables.push({ cluster, table: body });
      else for (const obj of name ? [body as KubeObject] : (body.items ?? [])) objects.push(annotate(obj, cluster));
    } catch (e) {
      failed = true;
      io.err(`error: cluster(${cluster}) is inaccessible: ${e instanceof ApiError ? e.message : (e as Error).message}\n`);
    }
  }
  if (name && notFound.length === clusters.length) {
    io.err(`Error from server (NotFound): ${resourceName(res)} ${JSON.stringify(name)} not found in cluster(s) ${clusters.join(", ")}\n`);
    return 1;
  }
  if (!table) {
    print(io, o.output, name && objects.length === 1 ? objects[0] : { apiVersion: "v1", kind: "List", metadata: { resourceVersion: "" }, items: objects });
    return failed ? 1 : 0;
  }
  const merged = mergeMemberTables(tables, { allNamespaces: !!o.allNamespaces && res.namespaced, wide: o.output === "wide" });
  if (merged.rows.length) io.out(renderTable(merged, { noHeaders: o.noHeaders }));
  else if (!failed) io.err(namespace ? `No resources found in ${namespace} namespace.\n` : "No resources found\n");
  return failed ? 1 : 0;
}

function parseJsonOr(text: string): { details?: { kind?: string } } | undefined {
  try {
    return JSON.parse(text) as { details?: { kind?: string } };
  } catch {
    return undefined;
  }
}

const annotate = (o: KubeObject, cluster: string): KubeObject => ({ ...o, metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, [FROM_CLUSTER]: cluster } } });

/** Reads a Cluster, changes its taints, writes it back with the resourceVersion it read (again on a conflict). */
async function changeTaints(gw: GatewayClient, name: string, change: (cur: Taint[]) => { taints: Taint[]; changed: boolean }): Promise<boolean> {
  const path = `${CLUSTERS}/${encodeURIComponent(name)}`;
  for (let attempt = 0; ; attempt++) {
    const c = await gw.json<Cluster>("GET", path);
    const { taints, changed } = change((c.spec?.taints ?? []) as Taint[]);
    if (!changed) return false;
    try {
      await gw.json("PUT", path, { body: { ...c, spec: { ...c.spec, taints } } });
      return true;
    } catch (e) {
      if (!(e instanceof ApiError && e.reason === "Conflict") || attempt >= 4) throw e;
    }
  }
}

/** The gateway path of a ResourceBinding or ClusterResourceBinding. */
function bindingPath(ref: BindingRef): string {
  const t = ref.cluster ? KARMADA.clusterResourceBinding : KARMADA.resourceBinding;
  return `/apis/${t.group}/${t.version}/${ref.cluster ? "" : `namespaces/${encodeURIComponent(ref.namespace ?? "default")}/`}${t.plural}/${encodeURIComponent(ref.name)}`;
}

/** `describe binding [ns/]name`: a ResourceBinding (namespaced) or ClusterResourceBinding. */
async function describe(io: Io, gw: GatewayClient, kind: string, ref: string): Promise<number> {
  const k = kind.toLowerCase();
  const cluster = ["clusterbinding", "clusterbindings", "crb", "clusterresourcebinding", "clusterresourcebindings"].includes(k);
  if (!cluster && !["binding", "bindings", "rb", "resourcebinding", "resourcebindings"].includes(k)) throw new CliError(`describe knows bindings (binding, rb, clusterbinding, crb), not ${JSON.stringify(kind)}`);
  const slash = ref.indexOf("/");
  const [ns, name] = slash < 0 ? [gw.conn.namespace, ref] : [ref.slice(0, slash), ref.slice(slash + 1)];
  if (!name) throw new CliError("describe needs a binding name ([namespace/]name)");
  io.out(describeBinding(await gw.json<AnyResourceBinding>("GET", bindingPath({ cluster, namespace: ns, name })), io.now()));
  return 0;
}

/** `explain <kind>/<name>`: why the binding's replicas are on these clusters and not the others. */
async function explain(io: Io, gw: GatewayClient, first: string, second: string | undefined): Promise<number> {
  const ref = explainTarget(first, second, gw.conn.namespace);
  const path = bindingPath(ref);
  const a = await gw.send("GET", path);
  if (a.status === 404) throw new CliError(`${ref.cluster ? "clusterresourcebinding" : "resourcebinding"} ${ref.namespace && !ref.cluster ? `${ref.namespace}/` : ""}${ref.name} not found (no policy propagates that object yet?)`);
  io.out(explainBinding(parseAnswer<AnyResourceBinding>(a, `GET ${path}`)));
  return 0;
}

/** `history <kind>/<name>`: every change of the binding's placement, oldest first (the gateway's history subresource). */
async function history(io: Io, gw: GatewayClient, first: string, second: string | undefined, o: { output?: string; limit?: string }): Promise<number> {
  const ref = explainTarget(first, second, gw.conn.namespace, "history");
  if (o.limit !== undefined && !/^\d+$/.test(o.limit)) throw new CliError(`--limit must be a non-negative integer, not ${JSON.stringify(o.limit)}`);
  const path = `${bindingPath(ref)}/history${o.limit ? `?limit=${o.limit}` : ""}`;
  const a = await gw.send("GET", path);
  if (a.status === 404) throw new CliError(`${ref.cluster ? "clusterresourcebinding" : "resourcebinding"} ${ref.namespace && !ref.cluster ? `${ref.namespace}/` : ""}${ref.name} not found`);
  const list = parseAnswer<PlacementChangeList>(a, `GET ${path}`);
  if (o.output === "yaml" || o.output === "json") print(io, o.output, list);
  else io.out(historyTable(list, { wide: o.output === "wide" }));
  return 0;
}

/** `simulate -f policy.yaml`: where the policy would put the replicas, through the scheduler's dry run. */
async function simulate(io: Io, gw: GatewayClient, o: { filename: string; replicas?: string; fail?: string; output?: string }): Promise<number> {
  const text = await io.readFile(o.filename).catch((e: Error) => Promise.reject(new CliError(`cannot read ${o.filename}: ${e.message}`)));
  let docs: unknown[];
  try {
    docs = parseAllDocuments(text).map((d) => {
      if (d.errors.length) throw d.errors[0]!;
      return d.toJS() as unknown;
    }).filter((d) => d !== null && d !== undefined);
  } catch (e) {
    throw new CliError(`${o.filename} is not YAML: ${(e as Error).message}`);
  }
  const policies = docs.filter((d) => typeof d === "object" && d !== null && ["PropagationPolicy", "ClusterPropagationPolicy"].includes((d as { kind?: string }).kind ?? ""));
  if (!policies.length) throw new CliError(`${o.filename} holds no PropagationPolicy or ClusterPropagationPolicy`);
  const replicas = o.replicas === undefined ? undefined : Number(o.replicas);
  const fail = parseNames(o.fail);
  const clusters = fail.length ? (await gw.json<{ items: Cluster[] }>("GET", CLUSTERS)).items : undefined;
  let first = true;
  for (const policy of policies) {
    const sim = policySimulation(policy, o.filename, { replicas, fail, ...(clusters ? { clusters } : {}), namespace: gw.conn.namespace });
    const answer = await gw.json<{ status?: SimulationStatus }>("POST", SIMULATIONS_PATH, { body: sim });
    if (o.output === "yaml" || o.output === "json") {
      print(io, o.output, answer);
      continue;
    }
    const meta = (policy as { kind: string; metadata?: { name?: string } });
    const binding = ((sim.spec as { binding: { spec: { resource: { kind: string; name: string }; replicas: number } } }).binding.spec);
    io.out(`${first ? "" : "\n"}${meta.kind} ${meta.metadata?.name ?? ""}: ${binding.replicas} replicas of ${binding.resource.kind} ${binding.resource.name}${fail.length ? `, with ${fail.join(", ")} failed` : ""}\n`);
    io.out(explainSimulation(answer.status ?? {}));
    first = false;
  }
  return 0;
}

/** `simulate-failure member1 [member2 ...]`: the blast radius of those clusters failing, through the scheduler's dry run. */
async function simulateFailure(io: Io, gw: GatewayClient, clusters: string[], o: { output?: string }): Promise<number> {
  const answer = await gw.json<{ status?: FailureSimulationStatus }>("POST", FAILURE_SIMULATIONS_PATH, { body: failureSimulation(clusters) });
  if (o.output === "yaml" || o.output === "json") print(io, o.output, answer);
  else io.out(failureSimulationTables(answer.status ?? {}));
  return 0;
}

/** `register <member>`: what a Pull member's agent needs; printed, or with --apply created and its token written. */
async function register(io: Io, gw: GatewayClient, member: string, o: { apply?: boolean; gatewayUrl?: string; tokenFile?: string; rbac?: string; expiration: string }): Promise<number> {
  const objs = await readAgentObjects(member, o.rbac).catch((e: Error & { code?: string }) => Promise.reject(e.code ? new CliError(`cannot read the agent's manifest: ${e.message}`) : e));
  const gatewayUrl = o.gatewayUrl ?? gw.conn.server;
  const tokenFile = o.tokenFile ?? "agent.token";
  const sa = `${AGENT_NS}/${agentServiceAccount(member)}`;
  if (!o.apply) {
    io.out(`# the control plane: apply as an administrator (or run flotilla register ${member} --apply --token-file ${tokenFile})\n`);
    io.out(agentManifest(objs));
    io.out(`---\n# the agent's token: flotilla register ${member} --apply --token-file ${tokenFile} (or kubectl create token ${agentServiceAccount(member)} -n ${AGENT_NS} --duration=24h)\n`);
    io.out(`# the agent beside ${member} (services/agent):\n${agentEnv({ member, gatewayUrl, tokenFile }).replace(/^(?!#)(?=.)/gm, "# ")}`);
    return 0;
  }
  const seconds = Math.round(parseDuration(o.expiration) / 1000);
  if (seconds < 600) throw new CliError(`--expiration must be at least 10m, not ${o.expiration}`);
  const token = await applyAgentIdentity(gw, objs, member, seconds);
  if (o.tokenFile) {
    await io.writeFile(o.tokenFile, token);
    io.out(`agent identity for ${member}: ${sa}, token in ${o.tokenFile}\n`);
    io.out(agentEnv({ member, gatewayUrl, tokenFile: o.tokenFile }));
  } else io.out(`${token}\n`);
  return 0;
}

async function join(io: Io, gw: GatewayClient, name: string, o: { clusterKubeconfig?: string; clusterContext?: string; provider?: string; region?: string; zone?: string; labels?: string }): Promise<number> {
  if (!o.clusterKubeconfig) throw new CliError("join needs the member's kubeconfig: --cluster-kubeconfig <file>");
  const file = parseKubeconfig(await io.readFile(o.clusterKubeconfig).catch((e: Error) => Promise.reject(new KubeconfigError(`cannot read the kubeconfig ${o.clusterKubeconfig}: ${e.message}`))), o.clusterKubeconfig);
  const member = await readSecrets(io, resolveConnection([file], { context: o.clusterContext }));
  if (!member.token) throw new CliError(`the member kubeconfig ${o.clusterKubeconfig} has no bearer token for its user: a Push member is joined with a token (users[].user.token or tokenFile)`);
  const { secret, cluster } = joinObjects({ ...member, token: member.token, ...(member.ca ? { caData: member.ca } : {}) }, { name, provider: o.provider, region: o.region, zone: o.zone, labels: parseLabels(o.labels) });
  const clusterPath = `${CLUSTERS}/${encodeURIComponent(name)}`;
  const existing = await gw.send("GET", clusterPath);
  if (existing.status === 200) throw new CliError(`cluster ${name} is already joined (flotilla unjoin ${name} first)`);
  if (existing.status !== 404) parseAnswer(existing, `GET ${clusterPath}`);
  const secrets = `/api/v1/namespaces/${CREDENTIAL_NAMESPACE}/secrets`;
  const created = await gw.send("POST", secrets, { body: secret });
  if (created.status === 409) {
    // left by an earlier join of this name: its values are replaced
    const cur = await gw.json<KubeObject>("GET", `${secrets}/${encodeURIComponent(name)}`);
    await gw.json("PUT", `${secrets}/${encodeURIComponent(name)}`, { body: { ...cur, data: secret.data, stringData: undefined } });
  } else parseAnswer(created, `POST ${secrets}`);
  const c = await gw.json<Cluster>("POST", CLUSTERS, { body: cluster });
  // the Secret belongs to the Cluster: its token goes to this endpoint only
  for (let attempt = 0; attempt < 5; attempt++) {
    const cur = await gw.json<KubeObject>("GET", `${secrets}/${encodeURIComponent(name)}`);
    const owner = { apiVersion: cluster.apiVersion, kind: "Cluster", name, uid: c.metadata.uid ?? "" };
    const r = await gw.send("PUT", `${secrets}/${encodeURIComponent(name)}`, { body: { ...cur, metadata: { ...cur.metadata, ownerReferences: [owner] } } });
    if (r.status !== 409) {
      parseAnswer(r, `PUT ${secrets}/${name}`);
      break;
    }
  }
  io.out(`cluster(${name}) is joined successfully\n`);
  return 0;
}

async function unjoin(io: Io, gw: GatewayClient, name: string, waitMs: number): Promise<number> {
  const clusterPath = `${CLUSTERS}/${encodeURIComponent(name)}`;
  const c = await gw.json<Cluster>("GET", clusterPath);
  const del = await gw.send("DELETE", clusterPath);
  if (del.status !== 404) parseAnswer(del, `DELETE ${clusterPath}`);
  // the Cluster goes once its Works are removed from the member, which needs its credentials until then
  const deadline = io.now().getTime() + waitMs;
  while ((await gw.send("GET", clusterPath)).status !== 404) {
    if (io.now().getTime() >= deadline) throw new CliError(`cluster ${name} is still being deleted after ${Math.round(waitMs / 1000)} s (its Works are being removed from the member); its secret ${CREDENTIAL_NAMESPACE}/${name} is kept until it is gone`);
    await io.sleep(500);
  }
  const ref = c.spec?.secretRef;
  if (ref?.name) {
    const p = `/api/v1/namespaces/${encodeURIComponent(ref.namespace ?? CREDENTIAL_NAMESPACE)}/secrets/${encodeURIComponent(ref.name)}`;
    const r = await gw.send("DELETE", p);
    if (r.status !== 404) parseAnswer(r, `DELETE ${p}`);
  }
  io.out(`cluster(${name}) is unjoined successfully\n`);
  return 0;
}

const isClusterWord = (w: string) => ["cluster", "clusters", "cluster.cluster.karmada.io", "clusters.cluster.karmada.io"].includes(w.toLowerCase());

/** The program; `run` executes one command line. Exported for tests. */
export function program(io: Io, exit: { code: number }): Command {
  const p = new Command("flotilla")
    .description("Flotilla's command line: members through the cluster proxy, joining clusters, taints and bindings")
    .version("0.1.0")
    .option("--kubeconfig <file>", "the kubeconfig (default: $KUBECONFIG, else ~/.kube/config)")
    .option("--context <name>", "the kubeconfig context to use")
    .option("-n, --namespace <ns>", "the namespace (default: the context's, else default)")
    .option("-s, --server <url>", "the gateway URL, instead of the context's cluster")
    .option("--token <token>", "the bearer token, instead of the context's user")
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride()
    .showHelpAfterError();
  const run = (fn: (gw: GatewayClient, ...args: never[]) => Promise<number>) =>
    async function (this: Command, ...args: unknown[]) {
      const gw = await connect(io, this.optsWithGlobals<Globals>());
      try {
        exit.code = await (fn as (gw: GatewayClient, ...a: unknown[]) => Promise<number>)(gw, ...args.slice(0, -1));
      } finally {
        gw.close();
      }
    };

  p.command("get")
    .description("list or read objects: `clusters` from the control plane, any other kind from the members (through the cluster proxy) with a CLUSTER column")
    .argument("<kind>", "clusters, or a member kind: pods (po), deployments (deploy), services (svc), ... or plural.group")
    .argument("[name]", "one object by name")
    .option("-C, --clusters <names>", "members to read, comma-separated (default: every cluster)")
    .option("-A, --all-namespaces", "across all namespaces")
    .addOption(new Option("-o, --output <format>", "output format").choices(["wide", "yaml", "json"]))
    .option("-l, --selector <selector>", "label selector")
    .option("--no-headers", "leave out the header line")
    .action(
      run(async (gw, kind: string, name: string | undefined, o: GetOptions & { headers?: boolean }) => {
        const opts = { ...o, noHeaders: o.headers === false };
        return isClusterWord(kind) ? getClusters(io, gw, name, opts) : getFromMembers(io, gw, kind, name, opts);
      }),
    );

  p.command("join")
    .description("join a Push member: writes its credential Secret (karmada-cluster/<name>) and the Cluster, as karmadactl join")
    .argument("<name>", "the cluster's name")
    .requiredOption("--cluster-kubeconfig <file>", "the member's kubeconfig (server, CA and bearer token)")
    .option("--cluster-context <name>", "the context of the member's kubeconfig (default: its current one)")
    .option("--provider <name>", "spec.provider")
    .option("--region <name>", "spec.region")
    .option("--zone <name>", "spec.zones")
    .option("--labels <k=v,...>", "labels of the Cluster")
    .action(run(async (gw, name: string, o: Parameters<typeof join>[3]) => join(io, gw, name, o)));

  p.command("register")
    .description("prepare a Pull member's flotilla-agent: prints its namespaces, ServiceAccount and RBAC (examples/agent-rbac.yaml for this member) and settings; --apply creates them and issues its token")
    .argument("<member>", "the cluster's name")
    .option("--apply", "create the objects through the gateway (existing ones are kept) and request the agent's token")
    .option("--token-file <file>", "with --apply, write the token there (mode 0600) instead of printing it")
    .option("--gateway-url <url>", "the gateway URL the agent uses (default: the kubeconfig's server)")
    .option("--rbac <file>", "the agent's manifest, written for member3 (default: examples/agent-rbac.yaml)")
    .option("--expiration <duration>", "the token's lifetime (the gateway may cut it)", "24h")
    .action(run(async (gw, member: string, o: Parameters<typeof register>[3]) => register(io, gw, member, o)));

  p.command("unjoin")
    .description("remove a member: deletes the Cluster, waits until its Works are gone from the member, then deletes its credential Secret")
    .argument("<name>", "the cluster's name")
    .option("--wait <duration>", "how long to wait for the Cluster to go", "60s")
    .action(run(async (gw, name: string, o: { wait: string }) => unjoin(io, gw, name, parseDuration(o.wait))));

  p.command("describe")
    .description("describe a binding: placement, eviction tasks, aggregated status, conditions, the scheduler's diagnosis")
    .argument("<kind>", "binding (rb) or clusterbinding (crb)")
    .argument("<name>", "[namespace/]name")
    .action(run(async (gw, kind: string, name: string) => describe(io, gw, kind, name)));

  p.command("explain")
    .description("why a binding's replicas are on these clusters and not on the others: the scheduler's diagnosis, one row per cluster")
    .argument("<kind>", "binding (rb), clusterbinding (crb), or a template kind (deployment, ...); kind/name also works")
    .argument("[name]", "[namespace/]name of a binding, or the template's name (its namespace is -n)")
    .action(run(async (gw, kind: string, name: string | undefined) => explain(io, gw, kind, name)));

  p.command("history")
    .description("every change of a binding's placement (spec.clusters), oldest first: when, what triggered it and why, from which clusters to which, and who wrote it")
    .argument("<kind>", "binding (rb), clusterbinding (crb), or a template kind (deployment, ...); kind/name also works")
    .argument("[name]", "[namespace/]name of a binding, or the template's name (its namespace is -n)")
    .option("--limit <n>", "only the newest n changes")
    .addOption(new Option("-o, --output <format>", "output format (wide: the producer and message too)").choices(["wide", "yaml", "json"]))
    .action(run(async (gw, kind: string, name: string | undefined, o: { output?: string; limit?: string }) => history(io, gw, kind, name, o)));

  p.command("simulate")
    .description("dry-run placement: where a PropagationPolicy would put the replicas of the first object it selects, changing nothing")
    .requiredOption("-f, --filename <file>", "the policy's YAML (every PropagationPolicy and ClusterPropagationPolicy in it is simulated)")
    .option("--replicas <n>", "replicas of the selected object (default 1)")
    .option("--fail <names>", "clusters to simulate as failed, comma-separated (Ready False, not-ready taints)")
    .addOption(new Option("-o, --output <format>", "print the Simulation answered").choices(["yaml", "json"]))
    .action(run(async (gw, o: Parameters<typeof simulate>[2]) => simulate(io, gw, o)));

  p.command("simulate-failure")
    .description("blast radius, changing nothing: which bindings failing these clusters would evict, where each would go, which would not fit, and the capacity left")
    .argument("<clusters...>", "the clusters to fail")
    .addOption(new Option("-o, --output <format>", "print the FailureSimulation answered").choices(["yaml", "json"]))
    .action(run(async (gw, clusters: string[], o: { output?: string }) => simulateFailure(io, gw, clusters, o)));

  const taint = (changes: (args: string[]) => TaintChanges, said: (name: string, changed: boolean) => string, overwrite = false) =>
    async (gw: GatewayClient, name: string, args: string[]) => {
      const c = changes(args);
      const changed = await changeTaints(gw, name, (cur) => applyTaints(name, cur, c, { overwrite }));
      io.out(said(name, changed));
      return 0;
    };
  p.command("taint")
    .description("add or remove taints of a cluster, as kubectl taint: key=value:Effect, key:Effect, key:Effect- (remove), key- (remove every effect)")
    .argument("<resource>", "cluster (or clusters)")
    .argument("<name>", "the cluster's name")
    .argument("<taints...>", "the taints")
    .option("--overwrite", "replace the value of a taint that is already there")
    .action(
      run(async (gw, resource: string, name: string, taints: string[], o: { overwrite?: boolean }) => {
        if (!isClusterWord(resource)) throw new CliError(`taint works on clusters, not ${JSON.stringify(resource)}: flotilla taint cluster <name> key=value:Effect`);
        return taint(parseTaints, (n, changed) => (changed ? `cluster.cluster.karmada.io/${n} tainted\n` : `cluster.cluster.karmada.io/${n} not changed\n`), !!o.overwrite)(gw, name, taints);
      }),
    );
  p.command("cordon")
    .description(`mark a cluster unschedulable: the ${CORDON_TAINT.key}:NoSchedule taint, as karmadactl cordon`)
    .argument("<name>", "the cluster's name")
    .action(run(async (gw, name: string) => taint(() => ({ add: [CORDON_TAINT], remove: [] }), (n, changed) => `cluster.cluster.karmada.io/${n} ${changed ? "cordoned" : "already cordoned"}\n`)(gw, name, [])));
  p.command("uncordon")
    .description("mark a cluster schedulable again (removes the cordon taint)")
    .argument("<name>", "the cluster's name")
    .action(
      run(async (gw, name: string) => {
        const remove = (cur: Taint[]) => ({ taints: cur.filter((t) => !(t.key === CORDON_TAINT.key && t.effect === CORDON_TAINT.effect)), changed: cur.some((t) => t.key === CORDON_TAINT.key && t.effect === CORDON_TAINT.effect) });
        const changed = await changeTaints(gw, name, remove);
        io.out(`cluster.cluster.karmada.io/${name} ${changed ? "uncordoned" : "already uncordoned"}\n`);
        return 0;
      }),
    );

  p.command("top")
    .description("resource use of clusters from status.resourceSummary (what bound pods request, of what the nodes offer)")
    .argument("<resource>", "clusters")
    .argument("[name]", "one cluster")
    .action(
      run(async (gw, resource: string, name: string | undefined) => {
        if (!isClusterWord(resource)) throw new CliError(`top shows clusters, not ${JSON.stringify(resource)}`);
        const clusters = name ? [await gw.json<Cluster>("GET", `${CLUSTERS}/${encodeURIComponent(name)}`)] : (await gw.json<{ items: Cluster[] }>("GET", CLUSTERS)).items;
        io.out(renderTable(topClusters(clusters)));
        return 0;
      }),
    );
  return p;
}

/** Runs one command line (without `node` and the script); resolves with the exit code. */
export async function main(argv: readonly string[], io: Io = processIo): Promise<number> {
  const exit = { code: 0 };
  try {
    await program(io, exit).parseAsync([...argv], { from: "user" });
    return exit.code;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode;
    if (e instanceof ApiError) io.err(`${e.display}\n`);
    else if (e instanceof CliError || e instanceof KubeconfigError || e instanceof TaintError || e instanceof ExplainError || e instanceof SimulateError || e instanceof SimulateFailureError || e instanceof RegisterError) io.err(`error: ${e.message}\n`);
    else io.err(`error: ${(e as Error).message ?? String(e)}\n`);
    return 1;
  }
}
