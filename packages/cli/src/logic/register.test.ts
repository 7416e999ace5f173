import { test } from "node:test";
import assert from "node:assert/strict";
import { agentEnv, agentManifest, agentObjects, checkMember, tokenPath, tokenRequest } from "./register.js";

const manifest = `# identity of member3's agent
# (more comments)
apiVersion: v1
kind: ServiceAccount
metadata:
  name: flotilla-agent-member3
  namespace: karmada-cluster
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: flotilla:agent:member3
  namespace: karmada-es-member3
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: flotilla:agent:member3
subjects: [{kind: ServiceAccount, name: flotilla-agent-member3, namespace: karmada-cluster}]
`;

test("agentObjects: the namespaces, then the manifest's objects for this member, each with its collection", () => {
  const objs = agentObjects(manifest, "edge1");
  assert.deepEqual(
    objs.map((o) => [o.kind, o.namespace, o.path]),
    [
      ["Namespace", "", "/api/v1/namespaces"],
      ["Namespace", "", "/api/v1/namespaces"],
      ["ServiceAccount", "karmada-cluster", "/api/v1/namespaces/karmada-cluster/serviceaccounts"],
      ["Role", "karmada-es-edge1", "/apis/rbac.authorization.k8s.io/v1/namespaces/karmada-es-edge1/roles"],
      ["ClusterRoleBinding", "", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"],
    ],
  );
  assert.equal(objs[1]!.doc, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: karmada-es-edge1\n");
  // the example's comments are left out, and no member3 is left anywhere
  assert.equal(objs[2]!.doc, "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: flotilla-agent-edge1\n  namespace: karmada-cluster\n");
  const all = agentManifest(objs);
  assert.doesNotMatch(all, /member3/);
  assert.equal(all.split("---\n").length, 5);
  assert.match(all, /subjects: \[\{kind: ServiceAccount, name: flotilla-agent-edge1, namespace: karmada-cluster\}\]\n$/);
});

test("agentObjects: a name that would change the YAML, or a kind it does not apply, is refused", () => {
  const bad = ["", "Member1", "a b", "x\n  namespace: kube-system", "-a", "a-", "a".repeat(49)];
  for (const m of bad) assert.throws(() => checkMember(m), /invalid cluster name/, JSON.stringify(m));
  for (const m of ["member1", "m", "edge-7", "a".repeat(48)]) assert.doesNotThrow(() => checkMember(m), m);
  assert.throws(() => agentObjects("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n", "m1"), /holds a Secret, which register does not apply/);
});

test("tokenRequest, tokenPath and agentEnv", () => {
  assert.deepEqual(tokenRequest(3600), { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } });
  assert.equal(tokenPath("edge1"), "/api/v1/namespaces/karmada-cluster/serviceaccounts/flotilla-agent-edge1/token");
  assert.equal(
    agentEnv({ member: "edge1", gatewayUrl: "https://gw:8443", tokenFile: "agent.token" }),
    "CLUSTER_NAME=edge1\nGATEWAY_URL=https://gw:8443\nGATEWAY_TOKEN_FILE=agent.token\n# and the member: MEMBER_KUBECONFIG=<file>, or MEMBER_API_SERVER with MEMBER_TOKEN_FILE and MEMBER_CA_FILE, else in-cluster credentials\n",
  );
});
