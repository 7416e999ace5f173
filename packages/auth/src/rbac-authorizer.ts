import { isDeepStrictEqual } from "node:util";
import { ForbiddenError, groupKind, type KubeObject } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import { Informer } from "@flotilla/runtime";
import type { ObjectStore } from "@flotilla/store";
import {
  WRITE_VERBS,
  authorize,
  authorizeReserved,
  forbiddenMessage,
  isReservedNamespace,
  type Attributes,
  type Binding,
  type Decision,
  type PolicyRule,
  type RbacSnapshot,
  type UserInfo,
} from "./rbac.js";

const RBAC = "rbac.authorization.k8s.io";
const GK = { role: `${RBAC}/Role`, clusterRole: `${RBAC}/ClusterRole`, roleBinding: `${RBAC}/RoleBinding`, clusterRoleBinding: `${RBAC}/ClusterRoleBinding` } as const;

const arr = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
const strs = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : undefined);
const rulesOf = (o: KubeObject): PolicyRule[] =>
  arr<Record<string, unknown>>((o as { rules?: unknown }).rules)
    .filter((r) => typeof r === "object" && r !== null)
    .map((r) => ({ verbs: strs(r.verbs), apiGroups: strs(r.apiGroups), resources: strs(r.resources), resourceNames: strs(r.resourceNames), nonResourceURLs: strs(r.nonResourceURLs) }));
const bindingOf = (o: KubeObject): Binding => {
  const b = o as { subjects?: unknown; roleRef?: unknown };
  const ref = (typeof b.roleRef === "object" && b.roleRef !== null ? b.roleRef : {}) as Binding["roleRef"];
  return { namespace: o.metadata.namespace ?? "", name: o.metadata.name ?? "", subjects: arr<Binding["subjects"][number]>(b.subjects).filter((s) => typeof s === "object" && s !== null), roleRef: ref };
};

/**
 * Kubernetes RBAC over the Role, ClusterRole, RoleBinding and ClusterRoleBinding objects in the
 * store, followed by an Informer (each gateway replica keeps its own copy, current within the
 * watch's lag, as kube-apiserver's authorizer is). Every object is read defensively: a rule or
 * subject of the wrong shape matches nothing.
 */
export class RbacAuthorizer {
  private readonly roles = new Map<string, PolicyRule[]>();
  private readonly clusterRoles = new Map<string, PolicyRule[]>();
  private readonly roleBindings = new Map<string, Map<string, Binding>>();
  private readonly clusterRoleBindings = new Map<string, Binding>();
  private snap?: RbacSnapshot;
  private readonly informer: Informer<undefined>;

  /**
   * `bootstrap`: the default roles this process keeps in place at start (the gateway's); a
   * service that only authorizes calls writes none.
   */
  constructor(
    private readonly store: ObjectStore,
    private readonly log?: Logger,
    private readonly bootstrap: () => KubeObject[] = () => [],
  ) {
    this.informer = new Informer<undefined>({
      store,
      gk: Object.values(GK),
      transform: () => undefined,
      log: log?.child({ component: "rbac" }),
      onEvent: (e) => this.observe(e.gk, e.key, e.type === "DELETED" ? undefined : e.object),
    });
  }

  private observe(gk: string, key: string, o: KubeObject | undefined): void {
    this.snap = undefined;
    const ns = o?.metadata.namespace ?? key.split("/")[0]!;
    switch (gk) {
      case GK.role:
        if (o) this.roles.set(key, rulesOf(o));
        else this.roles.delete(key);
        break;
      case GK.clusterRole:
        if (o) this.clusterRoles.set(key, rulesOf(o));
        else this.clusterRoles.delete(key);
        break;
      case GK.clusterRoleBinding:
        if (o) this.clusterRoleBindings.set(key, bindingOf(o));
        else this.clusterRoleBindings.delete(key);
        break;
      case GK.roleBinding: {
        const m = this.roleBindings.get(ns) ?? new Map<string, Binding>();
        if (o) m.set(key, bindingOf(o));
        else m.delete(key);
        if (m.size) this.roleBindings.set(ns, m);
        else this.roleBindings.delete(ns);
        break;
      }
    }
  }

  snapshot(): RbacSnapshot {
    this.snap ??= {
      roles: this.roles,
      clusterRoles: this.clusterRoles,
      clusterRoleBindings: [...this.clusterRoleBindings.values()],
      roleBindings: new Map([...this.roleBindings].map(([ns, m]) => [ns, [...m.values()]])),
    };
    return this.snap;
  }

  /** Writes the default roles (`bootstrap`) that are missing or marked for auto-update, then follows RBAC objects. */
  async start(): Promise<void> {
    for (const want of this.bootstrap()) {
      const ref = { gk: groupKind({ group: RBAC, kind: want.kind }), name: want.metadata.name! };
      // another gateway replica writing it first: looked at again
      await this.store.upsert(ref, (cur) => {
        if (!cur) return want;
        if (cur.metadata.annotations?.["rbac.authorization.kubernetes.io/autoupdate"] === "false" || sameContent(cur, want)) return undefined;
        return { ...cur, ...want, metadata: { ...cur.metadata, labels: { ...cur.metadata.labels, ...want.metadata.labels }, annotations: { ...cur.metadata.annotations, ...want.metadata.annotations } } };
      });
    }
    await this.informer.start();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  decide(user: UserInfo, a: Attributes): Decision {
    const snap = this.snapshot();
    const d = authorize(snap, user, a);
    if (!d.allowed || !a.resourceRequest || !WRITE_VERBS.has(a.verb) || !isReservedNamespace(a.namespace)) return d;
    return authorizeReserved(snap, user, a);
  }

  /** The decision when `user` may do `a`; else throws the 403 Status Kubernetes answers. */
  check(user: UserInfo, a: Attributes): Decision {
    const d = this.decide(user, a);
    if (d.allowed) return d;
    const base = forbiddenMessage(user, a);
    throw new ForbiddenError(d.reason ? `${base}: ${d.reason}` : base, a.resourceRequest ? { group: a.apiGroup, kind: a.resource, name: a.name } : undefined);
  }
}

/** Whether the stored default has the wanted rules/subjects and labels (an unchanged default is not written again; key order, which jsonb changes, does not count). */
const sameContent = (a: KubeObject, b: KubeObject) =>
  isDeepStrictEqual({ ...a, metadata: undefined, apiVersion: undefined }, { ...b, metadata: undefined, apiVersion: undefined }) &&
  Object.entries(b.metadata.labels ?? {}).every(([k, v]) => a.metadata.labels?.[k] === v);
