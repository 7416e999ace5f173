/**
 * Which member resource a `get` argument names: kubectl's plural, singular and short names of the
 * built-in kinds, `plural.group` (`deployments.apps`), or what a member's discovery lists.
 */

export interface MemberResource {
  group: string;
  version: string;
  /** URL name, e.g. "deployments". */
  plural: string;
  kind: string;
  namespaced: boolean;
}

const r = (group: string, version: string, plural: string, kind: string, namespaced: boolean, ...names: string[]) => ({ res: { group, version, plural, kind, namespaced }, names: [plural, kind.toLowerCase(), ...names] });

/** The kinds a member serves out of the box, with kubectl's short names. */
const BUILTIN = [
  r("", "v1", "pods", "Pod", true, "po"),
  r("", "v1", "services", "Service", true, "svc"),
  r("", "v1", "configmaps", "ConfigMap", true, "cm"),
  r("", "v1", "secrets", "Secret", true),
  r("", "v1", "namespaces", "Namespace", false, "ns"),
  r("", "v1", "nodes", "Node", false, "no"),
  r("", "v1", "serviceaccounts", "ServiceAccount", true, "sa"),
  r("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true, "pvc"),
  r("", "v1", "events", "Event", true, "ev"),
  r("apps", "v1", "deployments", "Deployment", true, "deploy"),
  r("apps", "v1", "statefulsets", "StatefulSet", true, "sts"),
  r("apps", "v1", "daemonsets", "DaemonSet", true, "ds"),
  r("apps", "v1", "replicasets", "ReplicaSet", true, "rs"),
  r("batch", "v1", "jobs", "Job", true),
  r("batch", "v1", "cronjobs", "CronJob", true, "cj"),
  r("networking.k8s.io", "v1", "ingresses", "Ingress", true, "ing"),
  r("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", true, "netpol"),
  r("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, "hpa"),
  r("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true, "pdb"),
];

/** A built-in kind by any of its names (`po`, `pod`, `pods`, `deployments.apps`, `deployments.v1.apps`); undefined for others. */
export function builtinResource(arg: string): MemberResource | undefined {
  const a = arg.toLowerCase();
  const dot = a.indexOf(".");
  const name = dot < 0 ? a : a.slice(0, dot);
  const rest = dot < 0 ? undefined : a.slice(dot + 1);
  for (const b of BUILTIN) {
    if (!b.names.includes(name)) continue;
    if (rest === undefined || rest === b.res.group || rest === `${b.res.version}.${b.res.group}` || (b.res.group === "" && rest === b.res.version)) return b.res;
  }
  return undefined;
}

/** One APIResourceList as discovery answers it. */
export interface DiscoveryList {
  groupVersion: string;
  resources: Array<{ name: string; kind: string; namespaced: boolean; shortNames?: string[]; singularName?: string }>;
}

/** The resource `arg` names in a member's discovery (plural, singular, kind or short name, optionally `.group`). */
export function findResource(arg: string, lists: readonly DiscoveryList[]): MemberResource | undefined {
  const a = arg.toLowerCase();
  const dot = a.indexOf(".");
  const name = dot < 0 ? a : a.slice(0, dot);
  const group = dot < 0 ? undefined : a.slice(dot + 1);
  for (const l of lists) {
    const slash = l.groupVersion.indexOf("/");
    const [g, v] = slash < 0 ? ["", l.groupVersion] : [l.groupVersion.slice(0, slash), l.groupVersion.slice(slash + 1)];
    if (group !== undefined && group !== g && group !== `${v}.${g}`) continue;
    for (const x of l.resources) {
      if (x.name.includes("/")) continue;
      const names = [x.name, x.kind.toLowerCase(), x.singularName ?? "", ...(x.shortNames ?? [])];
      if (names.includes(name)) return { group: g, version: v, plural: x.name, kind: x.kind, namespaced: x.namespaced };
    }
  }
  return undefined;
}

/** `deployments.apps`, `pods`: how kubectl names a resource in messages. */
export const resourceName = (r: MemberResource) => (r.group ? `${r.plural}.${r.group}` : r.plural);

/** The member path of a collection or an object: `/api/v1/...` or `/apis/{group}/{version}/...`. */
export function memberPath(r: MemberResource, o: { namespace?: string; name?: string; query?: Record<string, string | undefined> }): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const ns = r.namespaced && o.namespace ? `/namespaces/${encodeURIComponent(o.namespace)}` : "";
  const name = o.name ? `/${encodeURIComponent(o.name)}` : "";
  const q = new URLSearchParams(Object.entries(o.query ?? {}).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== "")).toString();
  return `${base}${ns}/${r.plural}${name}${q ? `?${q}` : ""}`;
}

/** The gateway path that proxies `path` to a member (the cluster proxy). */
export const proxyPath = (cluster: string, path: string) => `/apis/cluster.karmada.io/v1alpha1/clusters/${encodeURIComponent(cluster)}/proxy${path}`;
