/**
 * `flotilla register <member>`: what a Pull member's flotilla-agent needs on the control plane, as
 * `karmadactl register` prepares a karmada-agent: its execution namespace, and the least-privilege
 * identity of examples/agent-rbac.yaml (written for member3) for this member: a ServiceAccount in
 * karmada-cluster, its ClusterRole/Role and bindings; then a token of that ServiceAccount (TokenRequest).
 */

export const AGENT_NAMESPACE = "karmada-cluster";
/** The member the example manifest is written for. */
const EXAMPLE_MEMBER = "member3";

export class RegisterError extends Error {
  override readonly name = "RegisterError";
}

export const agentServiceAccount = (member: string) => `flotilla-agent-${member}`;

const COLLECTIONS: Record<string, (ns: string) => string> = {
  Namespace: () => "/api/v1/namespaces",
  ServiceAccount: (ns) => `/api/v1/namespaces/${ns}/serviceaccounts`,
  ClusterRole: () => "/apis/rbac.authorization.k8s.io/v1/clusterroles",
  ClusterRoleBinding: () => "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
  Role: (ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`,
  RoleBinding: (ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`,
};

export interface AgentObject {
  kind: string;
  /** Empty for cluster-scoped objects. */
  namespace: string;
  /** The collection to POST it to. */
  path: string;
  /** The object as YAML. */
  doc: string;
}

/** A cluster name as Kubernetes takes it (a DNS-1123 label): it is written into names and namespaces. */
export function checkMember(member: string): void {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(member) || member.length > 48) throw new RegisterError(`invalid cluster name ${JSON.stringify(member)}: lower-case letters, digits and '-', starting and ending with a letter or digit, at most 48 characters`);
}

/** The namespaces the agent works in, then the manifest's objects with the example member replaced, in order. */
export function agentObjects(manifest: string, member: string): AgentObject[] {
  checkMember(member);
  const text = manifest.replaceAll(EXAMPLE_MEMBER, member);
  const docs = [...[AGENT_NAMESPACE, `karmada-es-${member}`].map((ns) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`), ...text.split(/^---$/m).filter((d) => /^kind:/m.test(d))];
  return docs.map((d) => {
    const kind = /^kind: (\w+)/m.exec(d)![1]!;
    const collection = COLLECTIONS[kind];
    if (!collection) throw new RegisterError(`the agent's manifest holds a ${kind}, which register does not apply (${Object.keys(COLLECTIONS).join(", ")})`);
    const namespace = /^ {2}namespace: (\S+)/m.exec(d)?.[1] ?? "";
    // the comments above the first object describe the example, not this member
    return { kind, namespace, path: collection(namespace), doc: d.replace(/^(\s*#[^\n]*\n)+/, "").replace(/^\n+/, "") };
  });
}

/** The objects as one YAML stream (`kubectl apply -f -`). */
export const agentManifest = (objs: readonly AgentObject[]): string => objs.map((o) => o.doc.replace(/\n*$/, "\n")).join("---\n");

/** The TokenRequest for the agent's ServiceAccount. */
export const tokenRequest = (expirationSeconds: number) => ({ apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds } });

/** The path of the agent ServiceAccount's token subresource. */
export const tokenPath = (member: string) => `/api/v1/namespaces/${AGENT_NAMESPACE}/serviceaccounts/${agentServiceAccount(member)}/token`;

/** The settings of the agent beside the member (services/agent). */
export function agentEnv(o: { member: string; gatewayUrl: string; tokenFile: string }): string {
  return [`CLUSTER_NAME=${o.member}`, `GATEWAY_URL=${o.gatewayUrl}`, `GATEWAY_TOKEN_FILE=${o.tokenFile}`, "# and the member: MEMBER_KUBECONFIG=<file>, or MEMBER_API_SERVER with MEMBER_TOKEN_FILE and MEMBER_CA_FILE, else in-cluster credentials", ""].join("\n");
}
