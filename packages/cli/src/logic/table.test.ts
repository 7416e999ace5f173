import { test } from "node:test";
import assert from "node:assert/strict";
import { mergeMemberTables, renderTable, serverTable, type ServerTable } from "./table.js";

const podTable = (rows: Array<[string, string, string, boolean]>): ServerTable => ({
  columnDefinitions: [{ name: "Name" }, { name: "Ready" }, { name: "Status" }, { name: "Restarts" }, { name: "Age" }, { name: "IP", priority: 1 }, { name: "Node", priority: 1 }],
  rows: rows.map(([name, ns, ip, managed]) => ({ cells: [name, "1/1", "Running", "0", "110s", ip, "node-1"], object: { metadata: { namespace: ns, labels: (managed ? { "karmada.io/managed": "true" } : {}) as Record<string, string> } } })),
});

test("kubectl's layout: upper-case headers, columns three spaces apart, the last one unpadded", () => {
  assert.equal(renderTable({ headers: ["NAME", "READY"], rows: [["nginx-1", "1/1"], ["a", "10/10"]] }), "NAME      READY\nnginx-1   1/1\na         10/10\n");
  assert.equal(renderTable({ headers: ["NAME"], rows: [["x"]] }, { noHeaders: true }), "x\n");
});

test("the members' tables merge as karmadactl prints them: CLUSTER after NAME, ADOPTION last when Karmada propagated some", () => {
  const results = [
    { cluster: "member2", table: podTable([["nginx-d7q92", "default", "10.0.0.2", true], ["nginx-xmbp9", "default", "10.0.0.3", true]]) },
    { cluster: "member1", table: podTable([["nginx-97xbx", "default", "10.0.0.1", true], ["own", "kube-system", "10.0.0.9", false]]) },
  ];
  const cases: Array<[string, Parameters<typeof mergeMemberTables>[1], string]> = [
    [
      "one namespace",
      {},
      [
        "NAME          CLUSTER   READY   STATUS    RESTARTS   AGE    ADOPTION",
        "nginx-d7q92   member2   1/1     Running   0          110s   Y",
        "nginx-xmbp9   member2   1/1     Running   0          110s   Y",
        "nginx-97xbx   member1   1/1     Running   0          110s   Y",
        "own           member1   1/1     Running   0          110s   N",
      ].join("\n") + "\n",
    ],
    [
      "across namespaces, wide",
      { allNamespaces: true, wide: true },
      [
        "NAMESPACE     NAME          CLUSTER   READY   STATUS    RESTARTS   AGE    IP         NODE     ADOPTION",
        "default       nginx-d7q92   member2   1/1     Running   0          110s   10.0.0.2   node-1   Y",
        "default       nginx-xmbp9   member2   1/1     Running   0          110s   10.0.0.3   node-1   Y",
        "default       nginx-97xbx   member1   1/1     Running   0          110s   10.0.0.1   node-1   Y",
        "kube-system   own           member1   1/1     Running   0          110s   10.0.0.9   node-1   N",
      ].join("\n") + "\n",
    ],
  ];
  for (const [name, o, want] of cases) assert.equal(renderTable(mergeMemberTables(results, o)), want, name);
  // pods the members made themselves: no ADOPTION column, as karmadactl get po
  const own = [{ cluster: "member1", table: podTable([["nginx-97xbx", "default", "10.0.0.1", false]]) }];
  assert.equal(renderTable(mergeMemberTables(own)), "NAME          CLUSTER   READY   STATUS    RESTARTS   AGE\nnginx-97xbx   member1   1/1     Running   0          110s\n");
});

test("a member printing other columns is matched by column name; no member, only headers", () => {
  const odd: ServerTable = { columnDefinitions: [{ name: "Age" }, { name: "Name" }], rows: [{ cells: ["5m", "x"] }] };
  const got = mergeMemberTables([{ cluster: "a", table: podTable([["p", "d", "ip", true]]) }, { cluster: "b", table: odd }]);
  assert.deepEqual(got.rows[1], ["x", "b", "", "", "", "5m", "N"]);
  assert.deepEqual(mergeMemberTables([]).headers, ["NAME", "CLUSTER"]);
});

test("the control plane's own tables print as the gateway sends them, wide adding the priority columns", () => {
  const t: ServerTable = { columnDefinitions: [{ name: "Name" }, { name: "Version" }, { name: "Mode" }, { name: "Ready" }, { name: "Age" }, { name: "APIEndpoint", priority: 1 }], rows: [{ cells: ["member1", "v1.29.0", "Push", "True", "3m", "http://127.0.0.1:7101"] }] };
  assert.equal(renderTable(serverTable(t)), "NAME      VERSION   MODE   READY   AGE\nmember1   v1.29.0   Push   True    3m\n");
  assert.deepEqual(serverTable(t, { wide: true }).headers, ["NAME", "VERSION", "MODE", "READY", "AGE", "APIENDPOINT"]);
});
