import { test } from "node:test";
import assert from "node:assert/strict";
import { assign, ownerOf, planLeases, type LeaseState } from "./shard.js";

const members = Array.from({ length: 300 }, (_, i) => `member${i + 1}`);
const three = ["exec-a", "exec-b", "exec-c"];

test("every member has exactly one owner, and every replica computes the same one", () => {
  const byA = assign(members, three);
  const byC = assign(members, [...three].reverse());
  assert.deepEqual(new Map([...byA].map(([r, ms]) => [r, [...ms].sort()])), new Map([...byC].map(([r, ms]) => [r, [...ms].sort()])));
  const all = [...byA.values()].flat();
  assert.equal(all.length, members.length);
  assert.equal(new Set(all).size, members.length);
});

test("members spread about evenly over the replicas", () => {
  for (const [r, ms] of assign(members, three)) assert.ok(ms.length > 70 && ms.length < 130, `${r} owns ${ms.length} of 300`);
});

test("a replica that leaves moves only its own members", () => {
  const before = assign(members, three);
  const after = assign(members, ["exec-a", "exec-c"]);
  for (const m of before.get("exec-a")!) assert.equal(ownerOf(m, ["exec-a", "exec-c"]), "exec-a");
  for (const m of before.get("exec-c")!) assert.equal(ownerOf(m, ["exec-a", "exec-c"]), "exec-c");
  assert.equal(after.get("exec-a")!.length + after.get("exec-c")!.length, 300);
});

test("a replica that joins takes members only from the others, about a share of them", () => {
  const four = [...three, "exec-d"];
  const after = assign(members, four);
  for (const r of three) for (const m of after.get(r)!) assert.equal(ownerOf(m, three), r);
  assert.ok(after.get("exec-d")!.length > 40 && after.get("exec-d")!.length < 110);
});

test("no replica, no owner", () => {
  assert.equal(ownerOf("member1", []), undefined);
  assert.deepEqual(assign(["member1"], []), new Map());
});

const base = (o: Partial<LeaseState>): LeaseState => ({ me: "exec-a", members: [], live: ["exec-a"], held: new Set(), draining: new Set(), ...o });
const ms = ["member1", "member2", "member3", "member4", "member5", "member6"];
const ofB = ms.filter((m) => ownerOf(m, ["exec-a", "exec-b"]) === "exec-b");
const ofA = ms.filter((m) => ownerOf(m, ["exec-a", "exec-b"]) === "exec-a");

const cases: [string, LeaseState, { acquire: string[]; drain: string[]; release: string[] }][] = [
  ["a replica alone takes every member", base({ members: ms }), { acquire: ms, drain: [], release: [] }],
  ["a replica whose heartbeat is not yet seen counts itself live", base({ members: ms, live: [] }), { acquire: ms, drain: [], release: [] }],
  [
    "when a second replica appears, the members it wins are drained, not released at once",
    base({ members: ms, live: ["exec-a", "exec-b"], held: new Set(ms) }),
    { acquire: ofA, drain: ofB, release: [] },
  ],
  [
    "members drained at the last round are released at this one",
    base({ members: ms, live: ["exec-a", "exec-b"], held: new Set(ofA), draining: new Set(ofB) }),
    { acquire: ofA, drain: [], release: ofB },
  ],
  [
    "a drained member that comes back to this replica is taken again, not released",
    base({ members: ms, live: ["exec-a"], held: new Set(ofA), draining: new Set(ofB) }),
    { acquire: ms, drain: [], release: [] },
  ],
  ["a member that is gone is released at once", base({ members: ["member1"], held: new Set(["member1", "member9"]) }), { acquire: ["member1"], drain: [], release: ["member9"] }],
  ["with no members there is nothing to take", base({ held: new Set() }), { acquire: [], drain: [], release: [] }],
];

for (const [name, state, want] of cases) {
  test(name, () => {
    const got = planLeases(state);
    assert.deepEqual({ acquire: got.acquire, drain: got.drain, release: got.release }, { acquire: [...want.acquire].sort(), drain: [...want.drain].sort(), release: [...want.release].sort() });
  });
}

test("the example replica pair splits the six members both ways (the table above means something)", () => {
  assert.ok(ofA.length > 0 && ofB.length > 0, `exec-a ${ofA.join(",")} / exec-b ${ofB.join(",")}`);
});
