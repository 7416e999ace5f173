/**
 * Kubernetes RBAC, evaluated as the kube-apiserver's RBAC authorizer does
 * (k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac): a request is allowed when some rule of a
 * role bound to the user (by name), one of its groups, or its service account allows it; there is
 * no deny. Pure: the roles and bindings come in a snapshot.
 */

/** Who is asking (Kubernetes' user.Info). */
export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
}

/** A user as Kubernetes writes it in API objects (authentication/v1 UserInfo: audit events, SelfSubjectReview). */
export const userInfoJson = (u: UserInfo) => ({ username: u.name, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups });

/** What is asked (Kubernetes' authorizer.Attributes). */
export type Attributes =
  | {
      resourceRequest: true;
      verb: string;
      apiGroup: string;
      resource: string;
      subresource?: string;
      /** '' for cluster-scoped objects and for requests across all namespaces. */
      namespace: string;
      name?: string;
    }
  | { resourceRequest: false; verb: string; path: string };

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
  apiGroup?: string;
}

export interface RoleRef {
  kind?: string;
  name?: string;
  apiGroup?: string;
}

export interface Binding {
  /** '' for a ClusterRoleBinding. */
  namespace: string;
  name: string;
  subjects: Subject[];
  roleRef: RoleRef;
}

/** The RBAC objects the decision reads: rules by role ("namespace/name", or name for ClusterRoles). */
export interface RbacSnapshot {
  roles: ReadonlyMap<string, PolicyRule[]>;
  clusterRoles: ReadonlyMap<string, PolicyRule[]>;
  clusterRoleBindings: readonly Binding[];
  /** RoleBindings by namespace. */
  roleBindings: ReadonlyMap<string, readonly Binding[]>;
}

export interface Decision {
  allowed: boolean;
  /** Why (the binding and role that allowed it), or what was denied. */
  reason: string;
}

/** Members of this group may do anything; no binding can take it away (Kubernetes' superuser group). */
export const SUPERUSER_GROUP = "system:masters";
export const AUTHENTICATED_GROUP = "system:authenticated";
export const SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:";

const has = (list: readonly string[] | undefined, v: string) => !!list && (list.includes("*") || list.includes(v));

/** rbac/v1 VerbMatches, APIGroupMatches, ResourceMatches, ResourceNameMatches, NonResourceURLMatches. */
export function ruleAllows(rule: PolicyRule, a: Attributes): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (!a.resourceRequest) {
    return (rule.nonResourceURLs ?? []).some((u) => u === "*" || u === a.path || (u.endsWith("*") && a.path.startsWith(u.slice(0, -1))));
  }
  if (!has(rule.apiGroups, a.apiGroup)) return false;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const resources = rule.resources ?? [];
  const resourceOk = resources.some((r) => r === "*" || r === combined || (a.subresource !== undefined && r === `*/${a.subresource}`));
  if (!resourceOk) return false;
  if (!rule.resourceNames || rule.resourceNames.length === 0) return true;
  return a.name !== undefined && a.name !== "" && rule.resourceNames.includes(a.name);
}

/** rbac/v1 appliesToUser: a User by name, a Group the user is in, a ServiceAccount by its user name. */
export function subjectMatches(s: Subject, user: UserInfo, bindingNamespace: string): boolean {
  switch (s.kind) {
    case "User":
      return s.name === user.name;
    case "Group":
      return !!s.name && user.groups.includes(s.name);
    case "ServiceAccount": {
      const ns = s.namespace || bindingNamespace;
      return !!ns && !!s.name && user.name === `${SERVICE_ACCOUNT_PREFIX}${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

function rulesOf(snap: RbacSnapshot, ref: RoleRef, bindingNamespace: string): PolicyRule[] {
  if (ref.kind === "ClusterRole") return snap.clusterRoles.get(ref.name ?? "") ?? [];
  if (ref.kind === "Role" && bindingNamespace) return snap.roles.get(`${bindingNamespace}/${ref.name ?? ""}`) ?? [];
  return [];
}

/** The RBAC decision: ClusterRoleBindings everywhere, RoleBindings in the request's namespace. */
export function authorize(snap: RbacSnapshot, user: UserInfo, a: Attributes): Decision {
  if (user.groups.includes(SUPERUSER_GROUP)) return { allowed: true, reason: `member of ${SUPERUSER_GROUP}` };
  for (const b of snap.clusterRoleBindings) {
    if (!b.subjects.some((s) => subjectMatches(s, user, ""))) continue;
    if (rulesOf(snap, b.roleRef, "").some((r) => ruleAllows(r, a))) return { allowed: true, reason: `RBAC: allowed by ClusterRoleBinding "${b.name}" of ClusterRole "${b.roleRef.name}"` };
  }
  if (a.resourceRequest && a.namespace) {
    for (const b of snap.roleBindings.get(a.namespace) ?? []) {
      if (!b.subjects.some((s) => subjectMatches(s, user, b.namespace))) continue;
      if (rulesOf(snap, b.roleRef, b.namespace).some((r) => ruleAllows(r, a))) return { allowed: true, reason: `RBAC: allowed by RoleBinding "${b.name}/${b.namespace}" of ${b.roleRef.kind} "${b.roleRef.name}"` };
    }
  }
  return { allowed: false, reason: "" };
}

/** Kubernetes' Forbidden message: `User "x" cannot create resource "works" in API group "…" in the namespace "…"`. */
export function forbiddenMessage(user: UserInfo, a: Attributes): string {
  if (!a.resourceRequest) return `User ${JSON.stringify(user.name)} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const where = a.namespace ? ` in the namespace ${JSON.stringify(a.namespace)}` : a.name || !a.namespace ? " at the cluster scope" : "";
  return `${a.resourceRequest && a.name ? `${res} ${JSON.stringify(a.name)} is forbidden: ` : ""}User ${JSON.stringify(user.name)} cannot ${a.verb} resource ${JSON.stringify(res)} in API group ${JSON.stringify(a.apiGroup)}${where}`;
}

/**
 * Namespaces only the control plane's own services and full administrators write in: the Works of
 * each member (`karmada-es-*`), the members' credentials (`karmada-cluster`) and Flotilla's own
 * service accounts (`flotilla-system`). A namespaced
 * grant from an ordinary role does not reach them; writing there takes a rule granting every verb
 * on every resource (or the superuser group), or a service's own role bound in that namespace.
 */
export function isReservedNamespace(ns: string): boolean {
  return ns === "karmada-cluster" || ns.startsWith("karmada-es-") || ns === "flotilla-system";
}

export const WRITE_VERBS: ReadonlySet<string> = new Set(["create", "update", "patch", "delete", "deletecollection"]);

/** A rule granting every verb on every resource of every group (cluster-admin's). */
export function isFullAccess(rule: PolicyRule): boolean {
  return (rule.verbs ?? []).includes("*") && (rule.apiGroups ?? []).includes("*") && (rule.resources ?? []).includes("*") && !rule.resourceNames?.length;
}

/**
 * A write in a reserved namespace: allowed for the superuser group, by a full-access rule bound
 * anywhere, or by a RoleBinding in that very namespace (an explicit, per-namespace grant).
 */
export function authorizeReserved(snap: RbacSnapshot, user: UserInfo, a: Attributes & { resourceRequest: true }): Decision {
  if (user.groups.includes(SUPERUSER_GROUP)) return { allowed: true, reason: `member of ${SUPERUSER_GROUP}` };
  for (const b of snap.clusterRoleBindings) {
    if (b.subjects.some((s) => subjectMatches(s, user, "")) && rulesOf(snap, b.roleRef, "").some(isFullAccess)) return { allowed: true, reason: `full access by ClusterRoleBinding "${b.name}"` };
  }
  for (const b of snap.roleBindings.get(a.namespace) ?? []) {
    if (b.subjects.some((s) => subjectMatches(s, user, b.namespace)) && rulesOf(snap, b.roleRef, b.namespace).some((r) => ruleAllows(r, a))) {
      return { allowed: true, reason: `RoleBinding "${b.name}/${b.namespace}"` };
    }
  }
  return { allowed: false, reason: `namespace ${JSON.stringify(a.namespace)} is reserved to the control plane's services and administrators` };
}

/** Every rule that applies to `user` in `namespace` (SelfSubjectRulesReview: `kubectl auth can-i --list`). */
export function rulesFor(snap: RbacSnapshot, user: UserInfo, namespace: string): PolicyRule[] {
  if (user.groups.includes(SUPERUSER_GROUP)) return [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }, { verbs: ["*"], nonResourceURLs: ["*"] }];
  const out: PolicyRule[] = [];
  for (const b of snap.clusterRoleBindings) if (b.subjects.some((s) => subjectMatches(s, user, ""))) out.push(...rulesOf(snap, b.roleRef, ""));
  if (namespace) for (const b of snap.roleBindings.get(namespace) ?? []) if (b.subjects.some((s) => subjectMatches(s, user, b.namespace))) out.push(...rulesOf(snap, b.roleRef, b.namespace));
  return out;
}
