import { CORE, type ResourceType } from "@flotilla/api";

/** One resource a simulated cluster serves, as discovery describes it. */
export interface ApiResource {
  group: string;
  version: string;
  kind: string;
  /** The URL name, e.g. "deployments". */
  plural: string;
  singular: string;
  namespaced: boolean;
  verbs: string[];
  shortNames?: string[];
  /** Writes to the object ignore `.status`; `/status` writes touch only `.status`. */
  statusSubresource: boolean;
}

/** A resource in a cluster's config: a known plural ("deployments") or a custom resource. */
export type ApiResourceSpec =
  | string
  | { name: string; kind: string; namespaced?: boolean; shortNames?: string[]; status?: boolean; singular?: string };

/**
 * The `apis` entry of a cluster's config: "default" (the built-in set), a group/version
 * string ("apps/v1": every built-in resource of it), or a group/version with chosen resources.
 */
export type ApiSpec = "default" | string | { groupVersion: string; resources?: ApiResourceSpec[] };

export const ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
export const READ_VERBS = ["get", "list", "watch"];

const fromType = (t: ResourceType): ApiResource => ({
  group: t.group,
  version: t.version,
  kind: t.kind,
  plural: t.plural,
  singular: t.singular,
  namespaced: t.namespaced,
  verbs: ALL_VERBS,
  ...(t.shortNames ? { shortNames: [...t.shortNames] } : {}),
  statusSubresource: t.statusSubresource,
});

/** The resources the simulator itself needs: served whatever the config says. */
export const POD: ApiResource = { group: "", version: "v1", kind: "Pod", plural: "pods", singular: "pod", namespaced: true, verbs: ALL_VERBS, shortNames: ["po"], statusSubresource: true };
export const NODE: ApiResource = { group: "", version: "v1", kind: "Node", plural: "nodes", singular: "node", namespaced: false, verbs: READ_VERBS, shortNames: ["no"], statusSubresource: true };
export const NAMESPACE: ApiResource = fromType(CORE.namespace);
export const DEPLOYMENT: ApiResource = fromType(CORE.deployment);
export const STATEFULSET: ApiResource = fromType(CORE.statefulSet);

/** Every built-in resource the simulator knows by name. */
export const BUILTIN: readonly ApiResource[] = [
  NAMESPACE,
  POD,
  NODE,
  ...[
    CORE.configMap,
    CORE.secret,
    CORE.service,
    CORE.serviceAccount,
    CORE.persistentVolumeClaim,
    CORE.event,
    CORE.deployment,
    CORE.statefulSet,
    CORE.daemonSet,
    CORE.replicaSet,
    CORE.job,
    CORE.cronJob,
    CORE.ingress,
    CORE.networkPolicy,
    CORE.hpa,
    CORE.pdb,
    CORE.role,
    CORE.roleBinding,
    CORE.clusterRole,
    CORE.clusterRoleBinding,
    CORE.crd,
  ].map((t) => (t.kind === "Deployment" ? DEPLOYMENT : t.kind === "StatefulSet" ? STATEFULSET : fromType(t))),
];

/** The default set: core v1, apps/v1, batch/v1, networking.k8s.io/v1, autoscaling/v2, policy/v1, rbac/v1. */
export const DEFAULT_APIS: readonly ApiResource[] = BUILTIN.filter((r) => r.kind !== "Event" && r.group !== "apiextensions.k8s.io");

export function groupVersion(r: { group: string; version: string }): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/** Resolves a cluster's `apis` config into its resources. Throws an Error naming the bad entry. */
export function resolveApis(spec: ApiSpec | ApiSpec[] | undefined): ApiResource[] {
  const entries: ApiSpec[] = spec === undefined ? ["default"] : Array.isArray(spec) ? spec : [spec];
  const out = new Map<string, ApiResource>();
  const add = (r: ApiResource) => out.set(`${r.group}/${r.plural}`, r);
  for (const r of [NAMESPACE, POD, NODE]) add(r);
  for (const e of entries) {
    if (e === "default") {
      DEFAULT_APIS.forEach(add);
      continue;
    }
    const gvText = typeof e === "string" ? e : e.groupVersion;
    if (typeof gvText !== "string" || !/^([a-z0-9.-]+\/)?v[0-9]+[a-z0-9]*$/.test(gvText)) {
      throw new Error(`apis: invalid groupVersion ${JSON.stringify(gvText)}`);
    }
    const slash = gvText.lastIndexOf("/");
    const group = slash < 0 ? "" : gvText.slice(0, slash);
    const version = gvText.slice(slash + 1);
    const known = BUILTIN.filter((r) => r.group === group && r.version === version);
    if (typeof e === "string" || !e.resources) {
      if (known.length === 0) throw new Error(`apis: ${gvText} has no built-in resources; list them with kind`);
      known.forEach(add);
      continue;
    }
    for (const rs of e.resources) {
      if (typeof rs === "string") {
        const r = known.find((k) => k.plural === rs);
        if (!r) throw new Error(`apis: ${gvText} has no built-in resource ${JSON.stringify(rs)}; give its kind`);
        add(r);
      } else {
        if (!rs || typeof rs.name !== "string" || typeof rs.kind !== "string") {
          throw new Error(`apis: a resource of ${gvText} needs a name and a kind`);
        }
        add({
          group,
          version,
          kind: rs.kind,
          plural: rs.name,
          singular: rs.singular ?? rs.kind.toLowerCase(),
          namespaced: rs.namespaced ?? true,
          verbs: ALL_VERBS,
          ...(rs.shortNames ? { shortNames: rs.shortNames } : {}),
          statusSubresource: rs.status ?? false,
        });
      }
    }
  }
  return [...out.values()];
}

/** Lookups over one cluster's resources. */
export class ApiIndex {
  readonly resources: readonly ApiResource[];
  private readonly byGv = new Map<string, ApiResource[]>();
  private readonly byGvPlural = new Map<string, ApiResource>();
  private readonly byGvKind = new Map<string, ApiResource>();

  constructor(resources: readonly ApiResource[]) {
    this.resources = resources;
    for (const r of resources) {
      const gv = groupVersion(r);
      let list = this.byGv.get(gv);
      if (!list) this.byGv.set(gv, (list = []));
      list.push(r);
      this.byGvPlural.set(`${gv}/${r.plural}`, r);
      this.byGvKind.set(`${gv}/${r.kind}`, r);
    }
  }

  /** Group versions in the order they were first listed; "v1" is the core group. */
  groupVersions(): string[] {
    return [...this.byGv.keys()];
  }

  inGroupVersion(gv: string): ApiResource[] | undefined {
    return this.byGv.get(gv);
  }

  byPlural(gv: string, plural: string): ApiResource | undefined {
    return this.byGvPlural.get(`${gv}/${plural}`);
  }

  byKind(apiVersion: string, kind: string): ApiResource | undefined {
    return this.byGvKind.get(`${apiVersion}/${kind}`);
  }
}
