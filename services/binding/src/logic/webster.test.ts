import { test } from "node:test";
import assert from "node:assert/strict";
import { websterSeats } from "./webster.js";

test("Webster apportionment", () => {
  const cases: [string, number, [string, number][], string, [string, number][]][] = [
    ["proportional when it divides", 6, [["a", 1], ["b", 2]], "", [["a", 2], ["b", 4]]],
    ["a tie goes to the smaller name when the uid is empty", 1, [["b", 1], ["a", 1]], "", [["a", 1], ["b", 0]]],
    ["zero votes get nothing while others have votes", 3, [["a", 0], ["b", 1]], "", [["a", 0], ["b", 3]]],
    ["no seats", 0, [["a", 1]], "", [["a", 0]]],
  ];
  for (const [name, seats, votes, uid, want] of cases) assert.deepEqual(websterSeats(seats, votes, uid).map((s) => [s.name, s.seats]), want, name);
  // an odd FNV-1a hash of the uid flips the name order of ties
  const odd = ["u1", "u2", "u3", "u4"].find((u) => websterSeats(1, [["a", 1], ["b", 1]], u)[1]!.seats === 1);
  assert.ok(odd, "some uid breaks ties towards the larger name");
});
