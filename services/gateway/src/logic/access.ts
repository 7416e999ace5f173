import type { KubeObject } from "@flotilla/api";
import { AUTHENTICATED_GROUP, type Attributes, type PolicyRule } from "./rbac.js";

const VERBS: Record<string, string> = { POST: "create", PUT: "update", PATCH: "patch", DELETE: "delete" };

/**
 * What an HTTP request asks, as Kubernetes' RequestInfoFactory reads it: a path under
 * /api/v1 or /apis/{group}/{version} naming a collection or object is a resource request (GET is
 * get, list or watch), anything else (discovery, /version, /openapi) a non-resource request whose
 * verb is the lower-case method. Parsed from the path alone, so unknown kinds are authorized (and
 * then answered 404) like known ones.
 */
export function requestAttributes(method: string, url: string): Attributes {
  const [pathPart, queryPart = ""] = url.split("?", 2) as [string, string?];
  const path = pathPart || "/";
  let segs: string[];
  try {
    segs = path.split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    segs = [];
  }
  const nonResource: Attributes = { resourceRequest: false, verb: method === "HEAD" ? "get" : method.toLowerCase(), path };
  let group: string;
  let rest: string[];
  if (segs[0] === "api" && segs.length >= 3) [group, rest] = ["", segs.slice(2)];
  else if (segs[0] === "apis" && segs.length >= 4) [group, rest] = [segs[1]!, segs.slice(3)];
  else return nonResource;
  let namespace = "";
  if (rest[0] === "namespaces" && rest.length >= 2) {
    // a namespace's own subresources (status, finalize) stay on the namespace, as upstream
    namespace = rest[1]!;
    if (rest.length > 2 && rest[2] !== "status" && rest[2] !== "finalize") rest = rest.slice(2);
  }
  const [resource, name, subresource] = rest as [string, string?, string?];
  const q = new URLSearchParams(queryPart);
  const watch = q.get("watch") === "true" || q.get("watch") === "1";
  // a connect-like subresource (the cluster proxy) takes the method's verb: a proxied watch is a `get` of clusters/proxy
  const verb = method === "GET" || method === "HEAD" ? (watch && subresource !== "proxy" ? "watch" : name ? "get" : "list") : (VERBS[method] ?? method.toLowerCase());
  return { resourceRequest: true, verb, apiGroup: group, resource, subresource, namespace, name };
}

/** Paths answered without authentication: the probes, and the portal and docs pages (static, no data; their requests carry a token). */
export const PUBLIC_PATHS: ReadonlySet<string> = new Set(["/healthz", "/livez", "/readyz", "/", "/docs"]);

const RBAC_GROUP = "rbac.authorization.k8s.io";
const READ = ["get", "list", "watch"];
const WRITE = ["create", "update", "patch", "delete"];
/** Every kind users write as templates or policies, by API group (the Karmada and Kubernetes kinds Flotilla serves). */
const TEMPLATE_RULES: PolicyRule[] = [
  { apiGroups: [""], resources: ["configmaps", "secrets", "services", "serviceaccounts", "persistentvolumeclaims", "namespaces"] },
  { apiGroups: ["apps", "batch", "networking.k8s.io", "autoscaling"], resources: ["*"] },
  { apiGroups: ["policy"], resources: ["poddisruptionbudgets"] },
  { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"] },
  { apiGroups: ["policy.karmada.io"], resources: ["propagationpolicies", "clusterpropagationpolicies", "overridepolicies", "clusteroverridepolicies"] },
];
const STATUS_VIEW: PolicyRule[] = [
  { apiGroups: ["cluster.karmada.io"], resources: ["clusters", "clusters/status"], verbs: READ },
  // a ClusterTaintPolicy writes Clusters' taints (NoExecute ones evict every tenant's workloads): an administrator's, like Cluster writes
  { apiGroups: ["policy.karmada.io"], resources: ["clustertaintpolicies"], verbs: READ },
  { apiGroups: ["work.karmada.io"], resources: ["resourcebindings", "clusterresourcebindings", "works", "resourcebindings/status", "clusterresourcebindings/status", "works/status"], verbs: READ },
  // a binding's placement history (read-only: `get` is all it answers)
  { apiGroups: ["work.karmada.io"], resources: ["resourcebindings/history", "clusterresourcebindings/history"], verbs: ["get"] },
  { apiGroups: [""], resources: ["events"], verbs: READ },
  { apiGroups: ["scheduling.flotilla.io"], resources: ["simulations", "failuresimulations"], verbs: ["create"] },
];

const bootstrapLabels = { "kubernetes.io/bootstrapping": "rbac-defaults" };
const clusterRole = (name: string, rules: PolicyRule[], description: string): KubeObject => ({
  apiVersion: `${RBAC_GROUP}/v1`,
  kind: "ClusterRole",
  metadata: { name, labels: bootstrapLabels, annotations: { "rbac.authorization.kubernetes.io/autoupdate": "true", "flotilla.io/description": description } },
  rules,
});
const toGroup = (name: string, role: string, group: string): KubeObject => ({
  apiVersion: `${RBAC_GROUP}/v1`,
  kind: "ClusterRoleBinding",
  metadata: { name, labels: bootstrapLabels, annotations: { "rbac.authorization.kubernetes.io/autoupdate": "true" } },
  roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: role },
  subjects: [{ apiGroup: RBAC_GROUP, kind: "Group", name: group }],
});

/**
 * The default roles the gateway makes sure exist (as kube-apiserver's bootstrap policy):
 * `flotilla:admin` (everything), `flotilla:edit` (templates, policies and Secrets outside the
 * reserved namespaces; reads clusters, bindings, Works and Events; no RBAC, Cluster or Work
 * writes), `flotilla:view` (reads all but Secrets), and what every authenticated user may do
 * (discovery, `kubectl auth can-i`, `whoami`). A default whose `autoupdate` annotation is not
 * "false" is put back to this content when the gateway starts.
 */
export function bootstrapPolicy(): KubeObject[] {
  return [
    clusterRole("flotilla:admin", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }, { nonResourceURLs: ["*"], verbs: ["*"] }], "every verb on every resource, including Works and member credentials"),
    clusterRole(
      "flotilla:edit",
      [...TEMPLATE_RULES.map((r) => ({ ...r, verbs: [...READ, ...WRITE] })), { apiGroups: [""], resources: ["serviceaccounts/token"], verbs: ["create"] }, ...STATUS_VIEW],
      "writes resource templates, namespaces, Secrets, service accounts (and their tokens) and propagation and override policies; reads clusters, cluster taint policies, bindings, Works and Events",
    ),
    clusterRole(
      "flotilla:view",
      [
        ...TEMPLATE_RULES.map((r) => ({ ...r, resources: r.resources!.filter((x) => x !== "secrets"), verbs: READ })),
        ...STATUS_VIEW.filter((r) => !r.verbs!.includes("create")),
        { apiGroups: [RBAC_GROUP], resources: ["*"], verbs: READ },
      ],
      "reads everything but Secrets",
    ),
    clusterRole(
      "flotilla:authenticated",
      [
        { nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/version", "/openapi.json", "/openapi/*"], verbs: ["get"] },
        { apiGroups: ["authorization.k8s.io"], resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], verbs: ["create"] },
        { apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"], verbs: ["create"] },
      ],
      "discovery and questions about oneself, for every authenticated user",
    ),
    toGroup("flotilla:authenticated", "flotilla:authenticated", AUTHENTICATED_GROUP),
  ];
}
