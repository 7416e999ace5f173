import { test } from "node:test";
import assert from "node:assert/strict";
import { createLogger } from "@flotilla/log";
import { Members } from "./members.js";

test("a cluster reached through a new client is reported (its Works are then compared with the member), a cluster that left is not", async (t) => {
  const newClient: string[] = [];
  const members = new Members({ log: createLogger({ name: "members-test", level: "silent" }), onNewClient: (c) => newClient.push(c) });
  t.after(() => members.close());
  const first = members.client("member1", { server: "http://127.0.0.1:1", token: "t1" });
  assert.equal(members.client("member1", { server: "http://127.0.0.1:1", token: "t1" }), first);
  assert.deepEqual(newClient, [], "the first client of a cluster is no take-over");
  members.client("member1", { server: "http://127.0.0.1:1", token: "t2" });
  assert.deepEqual(newClient, ["member1"], "a rotated credential is");
  members.drop("member1");
  assert.deepEqual(newClient, ["member1"], "a cluster that left is not");
});
