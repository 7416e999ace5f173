import { test } from "node:test";
import assert from "node:assert/strict";
import { authorize, authorizeReserved, forbiddenMessage, ruleAllows, subjectMatches, type Attributes, type Binding, type PolicyRule, type RbacSnapshot, type UserInfo } from "./rbac.js";
import { bootstrapPolicy, requestAttributes } from "./access.js";
import { bearerToken, csvFields, parseTokenFile, tokenDigest } from "./tokens.js";

const res = (verb: string, apiGroup: string, resource: string, o: Partial<Extract<Attributes, { resourceRequest: true }>> = {}): Attributes => ({ resourceRequest: true, verb, apiGroup, resource, namespace: "default", ...o });

test("rules match verbs, groups, resources, subresources and names as Kubernetes does", () => {
  const cases: Array<[string, PolicyRule, Attributes, boolean]> = [
    ["exact", { verbs: ["get"], apiGroups: ["apps"], resources: ["deployments"] }, res("get", "apps", "deployments"), true],
    ["other verb", { verbs: ["get"], apiGroups: ["apps"], resources: ["deployments"] }, res("list", "apps", "deployments"), false],
    ["verb *", { verbs: ["*"], apiGroups: ["apps"], resources: ["deployments"] }, res("delete", "apps", "deployments"), true],
    ["other group", { verbs: ["get"], apiGroups: [""], resources: ["deployments"] }, res("get", "apps", "deployments"), false],
    ["group *", { verbs: ["get"], apiGroups: ["*"], resources: ["deployments"] }, res("get", "apps", "deployments"), true],
    ["core group", { verbs: ["get"], apiGroups: [""], resources: ["secrets"] }, res("get", "", "secrets"), true],
    ["no groups listed", { verbs: ["get"], resources: ["secrets"] }, res("get", "", "secrets"), false],
    ["resource *", { verbs: ["get"], apiGroups: [""], resources: ["*"] }, res("get", "", "secrets"), true],
    ["subresource needs its own entry", { verbs: ["update"], apiGroups: ["apps"], resources: ["deployments"] }, res("update", "apps", "deployments", { subresource: "status" }), false],
    ["resource/subresource", { verbs: ["update"], apiGroups: ["apps"], resources: ["deployments/status"] }, res("update", "apps", "deployments", { subresource: "status" }), true],
    ["*/subresource", { verbs: ["update"], apiGroups: ["apps"], resources: ["*/status"] }, res("update", "apps", "deployments", { subresource: "status" }), true],
    ["* covers subresources", { verbs: ["update"], apiGroups: ["apps"], resources: ["*"] }, res("update", "apps", "deployments", { subresource: "status" }), true],
    ["resourceNames: that name", { verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: ["a"] }, res("get", "", "secrets", { name: "a" }), true],
    ["resourceNames: another name", { verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: ["a"] }, res("get", "", "secrets", { name: "b" }), false],
    ["resourceNames never allow a list", { verbs: ["list"], apiGroups: [""], resources: ["secrets"], resourceNames: ["a"] }, res("list", "", "secrets"), false],
    ["non-resource exact", { verbs: ["get"], nonResourceURLs: ["/version"] }, { resourceRequest: false, verb: "get", path: "/version" }, true],
    ["non-resource prefix", { verbs: ["get"], nonResourceURLs: ["/apis/*"] }, { resourceRequest: false, verb: "get", path: "/apis/apps/v1" }, true],
    ["non-resource other", { verbs: ["get"], nonResourceURLs: ["/apis/*"] }, { resourceRequest: false, verb: "get", path: "/metrics" }, false],
    ["resource rule never matches a path", { verbs: ["*"], apiGroups: ["*"], resources: ["*"] }, { resourceRequest: false, verb: "get", path: "/metrics" }, false],
    ["path rule never matches a resource", { verbs: ["*"], nonResourceURLs: ["*"] }, res("get", "", "secrets"), false],
  ];
  for (const [name, rule, a, want] of cases) assert.equal(ruleAllows(rule, a), want, name);
});

test("subjects: users by name, groups by membership, service accounts by their user name", () => {
  const u: UserInfo = { name: "system:serviceaccount:ops:deployer", groups: ["ops", "system:authenticated"] };
  const cases: Array<[Binding["subjects"][number], string, boolean]> = [
    [{ kind: "User", name: "system:serviceaccount:ops:deployer" }, "", true],
    [{ kind: "User", name: "deployer" }, "", false],
    [{ kind: "Group", name: "ops" }, "", true],
    [{ kind: "Group", name: "dev" }, "", false],
    [{ kind: "ServiceAccount", name: "deployer", namespace: "ops" }, "", true],
    [{ kind: "ServiceAccount", name: "deployer" }, "ops", true],
    [{ kind: "ServiceAccount", name: "deployer" }, "", false],
    [{ kind: "Robot", name: "deployer" }, "", false],
  ];
  for (const [s, ns, want] of cases) assert.equal(subjectMatches(s, u, ns), want, JSON.stringify([s, ns]));
});

const snapshot = (o: { roles?: Record<string, PolicyRule[]>; clusterRoles?: Record<string, PolicyRule[]>; crbs?: Binding[]; rbs?: Binding[] }): RbacSnapshot => {
  const byNs = new Map<string, Binding[]>();
  for (const b of o.rbs ?? []) byNs.set(b.namespace, [...(byNs.get(b.namespace) ?? []), b]);
  return { roles: new Map(Object.entries(o.roles ?? {})), clusterRoles: new Map(Object.entries(o.clusterRoles ?? {})), clusterRoleBindings: o.crbs ?? [], roleBindings: byNs };
};

test("authorize: ClusterRoleBindings everywhere, RoleBindings only in their namespace, no role no access", () => {
  const edit: PolicyRule[] = [{ verbs: ["*"], apiGroups: ["apps"], resources: ["deployments"] }];
  const snap = snapshot({
    roles: { "team-a/deployer": edit },
    clusterRoles: { reader: [{ verbs: ["get", "list"], apiGroups: ["*"], resources: ["*"] }], editor: edit },
    crbs: [{ namespace: "", name: "read-all", subjects: [{ kind: "Group", name: "readers" }], roleRef: { kind: "ClusterRole", name: "reader" } }],
    rbs: [
      { namespace: "team-a", name: "ann-deploys", subjects: [{ kind: "User", name: "ann" }], roleRef: { kind: "Role", name: "deployer" } },
      { namespace: "team-b", name: "bob-edits", subjects: [{ kind: "User", name: "bob" }], roleRef: { kind: "ClusterRole", name: "editor" } },
      { namespace: "team-b", name: "dangling", subjects: [{ kind: "User", name: "carl" }], roleRef: { kind: "Role", name: "missing" } },
    ],
  });
  const ann: UserInfo = { name: "ann", groups: [] };
  const bob: UserInfo = { name: "bob", groups: ["readers"] };
  const carl: UserInfo = { name: "carl", groups: [] };
  const cases: Array<[UserInfo, Attributes, boolean]> = [
    [ann, res("create", "apps", "deployments", { namespace: "team-a" }), true],
    [ann, res("create", "apps", "deployments", { namespace: "team-b" }), false],
    [ann, res("list", "apps", "deployments", { namespace: "" }), false],
    [bob, res("create", "apps", "deployments", { namespace: "team-b" }), true],
    [bob, res("create", "apps", "deployments", { namespace: "team-a" }), false],
    [bob, res("list", "", "secrets", { namespace: "" }), true],
    [carl, res("get", "apps", "deployments", { namespace: "team-b" }), false],
    [{ name: "root", groups: ["system:masters"] }, res("delete", "work.karmada.io", "works", { namespace: "karmada-es-m1" }), true],
  ];
  for (const [u, a, want] of cases) assert.equal(authorize(snap, u, a).allowed, want, JSON.stringify([u.name, a]));
  assert.match(authorize(snap, bob, res("create", "apps", "deployments", { namespace: "team-b" })).reason, /RoleBinding "bob-edits\/team-b"/);
});

test("reserved namespaces: a broad grant does not reach them; full access or a grant in that namespace does", () => {
  const snap = snapshot({
    clusterRoles: { edit: [{ verbs: ["*"], apiGroups: ["work.karmada.io"], resources: ["works"] }], admin: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }] },
    crbs: [
      { namespace: "", name: "ed", subjects: [{ kind: "User", name: "ed" }], roleRef: { kind: "ClusterRole", name: "edit" } },
      { namespace: "", name: "ad", subjects: [{ kind: "User", name: "ad" }], roleRef: { kind: "ClusterRole", name: "admin" } },
    ],
    rbs: [{ namespace: "karmada-es-m1", name: "ops", subjects: [{ kind: "User", name: "op" }], roleRef: { kind: "ClusterRole", name: "edit" } }],
  });
  const a = res("create", "work.karmada.io", "works", { namespace: "karmada-es-m1" }) as Extract<Attributes, { resourceRequest: true }>;
  assert.equal(authorizeReserved(snap, { name: "ed", groups: [] }, a).allowed, false);
  assert.equal(authorizeReserved(snap, { name: "ad", groups: [] }, a).allowed, true);
  assert.equal(authorizeReserved(snap, { name: "op", groups: [] }, a).allowed, true);
  assert.equal(authorizeReserved(snap, { name: "op", groups: [] }, { ...a, namespace: "karmada-es-m2" }).allowed, false);
});

test("forbidden messages read as Kubernetes'", () => {
  const u = { name: "vi", groups: [] };
  assert.equal(forbiddenMessage(u, res("create", "apps", "deployments")), 'User "vi" cannot create resource "deployments" in API group "apps" in the namespace "default"');
  assert.equal(forbiddenMessage(u, res("get", "", "secrets", { name: "s" })), 'secrets "s" is forbidden: User "vi" cannot get resource "secrets" in API group "" in the namespace "default"');
  assert.equal(forbiddenMessage(u, res("list", "cluster.karmada.io", "clusters", { namespace: "" })), 'User "vi" cannot list resource "clusters" in API group "cluster.karmada.io" at the cluster scope');
  assert.equal(forbiddenMessage(u, { resourceRequest: false, verb: "get", path: "/metrics" }), 'User "vi" cannot get path "/metrics"');
});

test("request attributes from method and URL", () => {
  const cases: Array<[string, string, Attributes]> = [
    ["GET", "/api/v1/namespaces/default/configmaps", res("list", "", "configmaps")],
    ["GET", "/api/v1/namespaces/default/configmaps?watch=true", res("watch", "", "configmaps")],
    ["GET", "/api/v1/namespaces/default/configmaps/x", res("get", "", "configmaps", { name: "x" })],
    ["GET", "/api/v1/configmaps", res("list", "", "configmaps", { namespace: "" })],
    ["POST", "/apis/apps/v1/namespaces/web/deployments", res("create", "apps", "deployments", { namespace: "web" })],
    ["PUT", "/apis/apps/v1/namespaces/web/deployments/d/status", res("update", "apps", "deployments", { namespace: "web", name: "d", subresource: "status" })],
    ["PATCH", "/apis/cluster.karmada.io/v1alpha1/clusters/m1", res("patch", "cluster.karmada.io", "clusters", { namespace: "", name: "m1" })],
    ["DELETE", "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-m1/works/w", res("delete", "work.karmada.io", "works", { namespace: "karmada-es-m1", name: "w" })],
    ["GET", "/api/v1/namespaces", res("list", "", "namespaces", { namespace: "" })],
    ["GET", "/api/v1/namespaces/ops", res("get", "", "namespaces", { namespace: "ops", name: "ops" })],
    ["PUT", "/api/v1/namespaces/ops/status", res("update", "", "namespaces", { namespace: "ops", name: "ops", subresource: "status" })],
    ["POST", "/apis/scheduling.flotilla.io/v1alpha1/simulations", res("create", "scheduling.flotilla.io", "simulations", { namespace: "" })],
    ["POST", "/apis/scheduling.flotilla.io/v1alpha1/failuresimulations", res("create", "scheduling.flotilla.io", "failuresimulations", { namespace: "" })],
    ["GET", "/api/v1/namespaces/a%2Fb/configmaps", res("list", "", "configmaps", { namespace: "a/b" })],
    ["GET", "/apis/apps/v1", { resourceRequest: false, verb: "get", path: "/apis/apps/v1" }],
    ["GET", "/api", { resourceRequest: false, verb: "get", path: "/api" }],
    ["GET", "/metrics", { resourceRequest: false, verb: "get", path: "/metrics" }],
    ["POST", "/version", { resourceRequest: false, verb: "post", path: "/version" }],
    ["GET", "/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy/api/v1/pods", res("get", "cluster.karmada.io", "clusters", { namespace: "", name: "m1", subresource: "proxy" })],
    ["GET", "/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy/api/v1/pods?watch=true", res("get", "cluster.karmada.io", "clusters", { namespace: "", name: "m1", subresource: "proxy" })],
    ["POST", "/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy/api/v1/namespaces/a/configmaps", res("create", "cluster.karmada.io", "clusters", { namespace: "", name: "m1", subresource: "proxy" })],
    ["GET", "/api/v1/namespaces/%zz/configmaps", { resourceRequest: false, verb: "get", path: "/api/v1/namespaces/%zz/configmaps" }],
  ];
  for (const [m, url, want] of cases) {
    const got = requestAttributes(m, url) as Record<string, unknown>;
    for (const k of Object.keys(got)) if (got[k] === undefined) delete got[k];
    assert.deepEqual(got, want, `${m} ${url}`);
  }
});

test("the default roles: admin does everything, edit cannot write Works, Clusters, ClusterTaintPolicies or RBAC, view reads but not Secrets", () => {
  const roles = new Map(bootstrapPolicy().filter((o) => o.kind === "ClusterRole").map((o) => [o.metadata.name!, (o as unknown as { rules: PolicyRule[] }).rules]));
  const can = (role: string, a: Attributes) => roles.get(role)!.some((r) => ruleAllows(r, a));
  assert.ok(can("flotilla:admin", res("create", "work.karmada.io", "works", { namespace: "karmada-es-m1" })));
  assert.ok(can("flotilla:edit", res("create", "apps", "deployments")));
  assert.ok(can("flotilla:edit", res("update", "policy.karmada.io", "propagationpolicies", { name: "p" })));
  assert.ok(can("flotilla:edit", res("create", "", "secrets")));
  assert.ok(can("flotilla:edit", res("list", "work.karmada.io", "works")));
  assert.ok(!can("flotilla:edit", res("create", "work.karmada.io", "works", { namespace: "karmada-es-m1" })));
  assert.ok(!can("flotilla:edit", res("create", "cluster.karmada.io", "clusters", { namespace: "" })));
  assert.ok(can("flotilla:edit", res("create", "policy.karmada.io", "clusteroverridepolicies", { namespace: "" })));
  assert.ok(!can("flotilla:edit", res("create", "policy.karmada.io", "clustertaintpolicies", { namespace: "" })));
  assert.ok(can("flotilla:edit", res("list", "policy.karmada.io", "clustertaintpolicies", { namespace: "" })));
  assert.ok(can("flotilla:view", res("get", "policy.karmada.io", "clustertaintpolicies", { namespace: "", name: "p" })));
  assert.ok(!can("flotilla:edit", res("create", "rbac.authorization.k8s.io", "clusterrolebindings", { namespace: "" })));
  assert.ok(can("flotilla:view", res("list", "apps", "deployments")));
  assert.ok(!can("flotilla:view", res("create", "apps", "deployments")));
  assert.ok(!can("flotilla:view", res("get", "", "secrets", { name: "s" })));
  assert.ok(can("flotilla:authenticated", { resourceRequest: false, verb: "get", path: "/apis/apps/v1" }));
  assert.ok(can("flotilla:authenticated", res("create", "authorization.k8s.io", "selfsubjectaccessreviews", { namespace: "" })));
  assert.ok(!can("flotilla:authenticated", res("list", "", "configmaps")));
});

test("token files in kube-apiserver's format", () => {
  assert.deepEqual(csvFields('a,b,c,"g1,g2"'), ["a", "b", "c", "g1,g2"]);
  assert.deepEqual(csvFields('a,"b ""quoted""",c'), ["a", 'b "quoted"', "c"]);
  assert.deepEqual(csvFields("a,,c"), ["a", "", "c"]);
  const users = parseTokenFile('t1,alice,u1,"dev,ops"\n\n  t2,bob,u2\r\nt3,carol,');
  assert.deepEqual(users.get(tokenDigest("t1")), { name: "alice", uid: "u1", groups: ["dev", "ops"] });
  assert.deepEqual(users.get(tokenDigest("t2")), { name: "bob", uid: "u2", groups: [] });
  assert.deepEqual(users.get(tokenDigest("t3")), { name: "carol", uid: undefined, groups: [] });
  assert.equal(users.size, 3);
  for (const [bad, why] of [
    ["t1,alice", /line 1: want token,user,uid/],
    ["ok,a,b\n,alice,u", /line 2: the token is empty/],
    ["t,,u", /the user name is empty/],
    ["t,a,u\nt,b,u", /line 2: the same token is given twice/],
    ['t,a,u,"g', /line 1: unterminated quoted field/],
    ['t,a"b,u', /a quote inside an unquoted field/],
  ] as const) assert.throws(() => parseTokenFile(bad), why);
  assert.equal(bearerToken("Bearer abc"), "abc");
  assert.equal(bearerToken("bearer abc"), "abc");
  assert.equal(bearerToken("Basic abc"), undefined);
  assert.equal(bearerToken("Bearer "), undefined);
  assert.equal(bearerToken("Bearer a b"), undefined);
  assert.equal(bearerToken(undefined), undefined);
});

test("protobuf bodies: malformed or truncated input is a 400, unknown kinds are not decoded", async () => {
  const { decodeProtobufObject, decodeSelfSubjectAccessReviewSpec, messageFields } = await import("./protobuf.js");
  const magic = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
  for (const bad of [Buffer.from([0x0a]), Buffer.from([0x0a, 0x05, 0x01]), Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), Buffer.from([0x0b])]) {
    assert.throws(() => messageFields(bad), (e: Error) => e.name === "BadRequestError", bad.toString("hex"));
  }
  assert.throws(() => decodeProtobufObject(Buffer.from("not protobuf")), /envelope/);
  assert.throws(() => decodeSelfSubjectAccessReviewSpec(Buffer.concat([magic, Buffer.from([0x12, 0x09])])), (e: Error) => e.name === "BadRequestError");
  // runtime.Unknown{typeMeta{apiVersion v1, kind ConfigMap}}: not an RBAC kind
  const tm = Buffer.concat([Buffer.from([0x0a, 0x02]), Buffer.from("v1"), Buffer.from([0x12, 0x09]), Buffer.from("ConfigMap")]);
  assert.equal(decodeProtobufObject(Buffer.concat([magic, Buffer.from([0x0a, tm.length]), tm])), undefined);
});
