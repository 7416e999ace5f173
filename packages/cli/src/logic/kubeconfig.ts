import { parse } from "yaml";

/**
 * kubeconfig files as kubectl reads them (client-go's clientcmd): several files (KUBECONFIG is a
 * list) merge with the first definition of each named cluster, user and context winning, and the
 * first current-context set; the context chosen names the server (and its CA) and the user (a
 * bearer token). Pure: the caller reads the files.
 */

export interface KubeconfigCluster {
  server?: string;
  "certificate-authority"?: string;
  "certificate-authority-data"?: string;
  "insecure-skip-tls-verify"?: boolean;
}
export interface KubeconfigUser {
  token?: string;
  tokenFile?: string;
  "client-certificate"?: string;
  "client-certificate-data"?: string;
  exec?: unknown;
  "auth-provider"?: unknown;
  username?: string;
}
export interface KubeconfigContext {
  cluster?: string;
  user?: string;
  namespace?: string;
}

/** One kubeconfig file as read: named entries, and where relative paths in it start from. */
export interface KubeconfigFile {
  path: string;
  clusters: Map<string, KubeconfigCluster>;
  users: Map<string, KubeconfigUser>;
  contexts: Map<string, KubeconfigContext>;
  currentContext?: string;
}

export class KubeconfigError extends Error {
  override readonly name = "KubeconfigError";
}

type Named = Array<{ name?: unknown } & Record<string, unknown>>;

function entries<T>(list: unknown, field: string, path: string): Map<string, T> {
  const out = new Map<string, T>();
  if (list === undefined || list === null) return out;
  if (!Array.isArray(list)) throw new KubeconfigError(`${path}: ${field}s must be a list`);
  for (const e of list as Named) {
    if (typeof e !== "object" || e === null || typeof e.name !== "string") throw new KubeconfigError(`${path}: every entry of ${field}s needs a name`);
    const body = e[field];
    if (!out.has(e.name)) out.set(e.name, (typeof body === "object" && body !== null ? body : {}) as T);
  }
  return out;
}

/** Reads one kubeconfig's text; `path` names it in errors and anchors its relative file paths. */
export function parseKubeconfig(text: string, path: string): KubeconfigFile {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw new KubeconfigError(`${path}: not valid YAML: ${(e as Error).message}`);
  }
  if (doc === null || doc === undefined) doc = {};
  if (typeof doc !== "object" || Array.isArray(doc)) throw new KubeconfigError(`${path}: not a kubeconfig (a YAML mapping)`);
  const d = doc as Record<string, unknown>;
  return {
    path,
    clusters: entries<KubeconfigCluster>(d.clusters, "cluster", path),
    users: entries<KubeconfigUser>(d.users, "user", path),
    contexts: entries<KubeconfigContext>(d.contexts, "context", path),
    ...(typeof d["current-context"] === "string" && d["current-context"] ? { currentContext: d["current-context"] } : {}),
  };
}

/** Where and who: what every request needs. Files named here are resolved against their kubeconfig. */
export interface Connection {
  /** The gateway's URL, without a trailing slash. */
  server: string;
  token?: string;
  /** A file holding the token (read by the caller). */
  tokenFile?: string;
  /** PEM text of the CA (from certificate-authority-data). */
  caData?: string;
  /** A file holding the CA (read by the caller). */
  caFile?: string;
  insecure: boolean;
  /** The context's namespace, else "default". */
  namespace: string;
  context: string;
}

const dirOf = (p: string) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/") + 1) : "");
const resolve = (file: string, from: string) => (file.startsWith("/") ? file : dirOf(from) + file);

/**
 * The connection of `context` (default: the current one) over the merged files. `server` (the
 * --server flag) and `token` (--token) override what the context says.
 */
export function resolveConnection(files: readonly KubeconfigFile[], o: { context?: string; server?: string; token?: string; namespace?: string } = {}): Connection {
  const find = <T>(pick: (f: KubeconfigFile) => Map<string, T>, name: string) => {
    for (const f of files) {
      const v = pick(f).get(name);
      if (v) return { v, file: f.path };
    }
    return undefined;
  };
  const contextName = o.context ?? files.find((f) => f.currentContext)?.currentContext;
  if (!contextName && !o.server) throw new KubeconfigError(`no context: the kubeconfig (${files.map((f) => f.path).join(", ") || "none"}) has no current-context; give --context or --server`);
  const ctx = contextName ? find((f) => f.contexts, contextName) : undefined;
  if (contextName && !ctx) throw new KubeconfigError(`context ${JSON.stringify(contextName)} is not in the kubeconfig (${files.map((f) => f.path).join(", ")})`);
  const cluster = ctx?.v.cluster ? find((f) => f.clusters, ctx.v.cluster) : undefined;
  if (ctx?.v.cluster && !cluster && !o.server) throw new KubeconfigError(`context ${JSON.stringify(contextName)} names cluster ${JSON.stringify(ctx.v.cluster)}, which the kubeconfig does not define`);
  const user = ctx?.v.user ? find((f) => f.users, ctx.v.user) : undefined;
  if (ctx?.v.user && !user && !o.token) throw new KubeconfigError(`context ${JSON.stringify(contextName)} names user ${JSON.stringify(ctx.v.user)}, which the kubeconfig does not define`);
  const server = (o.server ?? cluster?.v.server ?? "").replace(/\/+$/, "");
  if (!server) throw new KubeconfigError(`cluster ${JSON.stringify(ctx?.v.cluster ?? "")} of context ${JSON.stringify(contextName)} has no server`);
  if (!/^https?:\/\//.test(server)) throw new KubeconfigError(`the server ${JSON.stringify(server)} is not an http(s) URL`);
  const u = user?.v ?? {};
  if (!o.token && !u.token && !u.tokenFile && (u["client-certificate"] || u["client-certificate-data"] || u.exec || u["auth-provider"])) {
    throw new KubeconfigError(`user ${JSON.stringify(ctx?.v.user)} authenticates with a client certificate or a plugin; flotilla sends bearer tokens only (users[].user.token or tokenFile)`);
  }
  const c = cluster?.v ?? {};
  const caFile = c["certificate-authority"];
  return {
    server,
    ...(o.token ? { token: o.token } : u.token ? { token: u.token } : {}),
    ...(!o.token && !u.token && u.tokenFile ? { tokenFile: resolve(u.tokenFile, user!.file) } : {}),
    ...(c["certificate-authority-data"] ? { caData: Buffer.from(c["certificate-authority-data"], "base64").toString("utf8") } : {}),
    ...(!c["certificate-authority-data"] && caFile ? { caFile: resolve(caFile, cluster!.file) } : {}),
    insecure: c["insecure-skip-tls-verify"] === true,
    namespace: o.namespace ?? ctx?.v.namespace ?? "default",
    context: contextName ?? "",
  };
}

/** Where kubeconfigs are read from: --kubeconfig, else KUBECONFIG (a ':'-separated list), else ~/.kube/config. */
export function kubeconfigPaths(flag: string | undefined, env: string | undefined, home: string | undefined): string[] {
  if (flag) return [flag];
  const list = (env ?? "").split(":").filter(Boolean);
  if (list.length) return list;
  return [`${home ?? ""}/.kube/config`];
}
