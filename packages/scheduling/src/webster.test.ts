import { test } from "node:test";
import assert from "node:assert/strict";
import { addTargetClusters, allocateWebsterSeats, divideByWeights, uidTieBreaker, type Party } from "./webster.js";
import { fnv1a32 } from "./hash.js";

const seats = (ps: Party[]): Record<string, number> => Object.fromEntries(ps.map((p) => [p.name, p.seats]));

const cases: Array<[string, number, Record<string, number>, Record<string, number> | undefined, Record<string, number>]> = [
  ["weights 1:2 split 3 seats as 1 and 2", 3, { member1: 1, member2: 2 }, undefined, { member1: 1, member2: 2 }],
  ["weights 1:3 split 9 seats as 2 and 7", 9, { a: 1, b: 3 }, undefined, { a: 2, b: 7 }],
  [
    "the textbook Sainte-Laguë example gives 3, 3, 1, 1",
    8,
    { PartyA: 100000, PartyB: 80000, PartyC: 30000, PartyD: 20000 },
    undefined,
    { PartyA: 3, PartyB: 3, PartyC: 1, PartyD: 1 },
  ],
  ["zero seats leave everyone at zero", 0, { a: 1, b: 1 }, undefined, { a: 0, b: 0 }],
  ["initial seats count in the divisor", 1, { PartyA: 3, PartyB: 1 }, { PartyA: 1, PartyB: 0 }, { PartyA: 1, PartyB: 1 }],
  ["a party only in the initial assignment keeps its seats and gets no more", 2, { new1: 1, new2: 1 }, { old: 5 }, { new1: 1, new2: 1, old: 5 }],
  ["a party with zero votes gets nothing while others have votes", 4, { a: 0, b: 1 }, undefined, { a: 0, b: 4 }],
];
for (const [name, n, votes, initial, want] of cases) {
  test(name, () => {
    const got = allocateWebsterSeats(n, Object.entries(votes), initial && Object.entries(initial));
    assert.deepEqual(seats(got), want);
    assert.deepEqual(got.map((p) => p.name), Object.keys(want).sort());
  });
}

test("no parties give an empty result", () => {
  assert.deepEqual(allocateWebsterSeats(3, []), []);
});

// Two UIDs, one hashing to an even number and one to an odd one.
function uidWithParity(odd: boolean): string {
  for (let i = 0; ; i++) {
    const uid = `uid-${i}`;
    if ((fnv1a32(uid) % 2 === 1) === odd) return uid;
  }
}

const ties: Array<[string, string | undefined, Record<string, number>]> = [
  ["an empty UID breaks an exact tie by name ascending", undefined, { a: 1, b: 0 }],
  ["an even UID hash breaks an exact tie by name ascending", uidWithParity(false), { a: 1, b: 0 }],
  ["an odd UID hash breaks an exact tie by name descending", uidWithParity(true), { a: 0, b: 1 }],
];
for (const [name, uid, want] of ties) {
  test(name, () => {
    assert.deepEqual(seats(allocateWebsterSeats(1, [["a", 1], ["b", 1]], undefined, uidTieBreaker(uid))), want);
  });
}

test("a tie prefers the party with fewer seats before looking at names", () => {
  // a: 3/(2·1+1) = 1, b: 1/(2·0+1) = 1; b has fewer seats.
  const got = allocateWebsterSeats(1, [["a", 3], ["b", 1]], [["a", 1]], uidTieBreaker(uidWithParity(false)));
  assert.deepEqual(seats(got), { a: 1, b: 1 });
});

test("divideByWeights returns target clusters sorted by name, zeros included", () => {
  assert.deepEqual(
    divideByWeights(3, [{ name: "z", weight: 2 }, { name: "a", weight: 1 }, { name: "m", weight: 0 }], uidTieBreaker("")),
    [
      { name: "a", replicas: 1 },
      { name: "m", replicas: 0 },
      { name: "z", replicas: 2 },
    ],
  );
});

const additions: Array<[string, Record<string, number>, Record<string, number>, Array<[string, number]>]> = [
  ["replicas of a cluster in both are summed", { a: 2, b: 4, c: 6 }, { a: 4, b: 4, c: 4 }, [["a", 6], ["b", 8], ["c", 10]]],
  ["a cluster only in the addition is appended", { a: 3 }, { a: 1, b: 2 }, [["a", 4], ["b", 2]]],
  ["a cluster only in the base keeps its replicas", { a: 3, b: 1 }, { a: 2 }, [["a", 5], ["b", 1]]],
  ["nothing added leaves the base", { a: 3 }, {}, [["a", 3]]],
];
for (const [name, base, added, want] of additions) {
  test(name, () => {
    const ts = (r: Record<string, number>) => Object.entries(r).map(([n, replicas]) => ({ name: n, replicas }));
    assert.deepEqual(addTargetClusters(ts(base), ts(added)).map((t) => [t.name, t.replicas]), want);
  });
}
