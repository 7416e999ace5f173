import { test } from "node:test";
import assert from "node:assert/strict";
import { countShare, rateShare, type LimitHolder } from "./fleet-share.js";

const h = (holder: string, demand: number, used = 0): LimitHolder => ({ holder, demand, used });

test("a replica's share of a fleet-wide rate", () => {
  const cases: [string, number, LimitHolder, LimitHolder[], number][] = [
    ["alone, the whole rate", 30, h("a", 100), [h("a", 100)], 30],
    ["alone before its first renewal, the whole rate", 30, h("a", 0), [], 30],
    ["three replicas asked alike split it evenly", 30, h("b", 99), [h("a", 99), h("b", 99), h("c", 99)], 10],
    ["none asked anything: evenly", 30, h("a", 0), [h("a", 0), h("b", 0), h("c", 0)], 10],
    ["a replica asked three times as much gets three times the share", 40, h("a", 299), [h("a", 299), h("b", 99)], 30],
    ["a replica asked nothing still gets a little", 40, h("b", 0), [h("a", 99), h("b", 0)], 40 / 101],
    ["a replica not yet in the snapshot counts itself in", 30, h("c", 0), [h("a", 0), h("b", 0)], 10],
    ["a rate of 0 stays 0", 0, h("a", 5), [h("a", 5), h("b", 5)], 0],
    ["no limit stays no limit", Infinity, h("a", 5), [h("a", 5), h("b", 5)], Infinity],
  ];
  for (const [name, total, me, holders, want] of cases) assert.ok(rateShare(total, me, holders) === want || Math.abs(rateShare(total, me, holders) - want) < 1e-9, `${name}: ${rateShare(total, me, holders)} ≠ ${want}`);
});

test("the shares of one snapshot add up to the rate", () => {
  const all = [h("a", 7), h("b", 0), h("c", 1234), h("d", 55)];
  const sum = all.reduce((s, me) => s + rateShare(100, me, all), 0);
  assert.ok(Math.abs(sum - 100) < 1e-9, String(sum));
});

test("a replica's share of a fleet-wide cap", () => {
  const cases: [string, number, LimitHolder, LimitHolder[], number][] = [
    ["alone, the whole cap", 5, h("a", 0), [], 5],
    ["none wants more: what is held stays held, the free part is split evenly (a tie goes to the first name)", 5, h("a", 2, 2), [h("a", 2, 2), h("b", 0)], 4],
    ["none wants more: the other gets the rest", 5, h("b", 0), [h("a", 2, 2), h("b", 0)], 1],
    ["asking now for one more, with all but one held elsewhere by replicas that want no more: the free one is its", 3, h("c", 1, 0), [h("a", 1, 1), h("b", 1, 1)], 1],
    ["the others asked nothing more: the free one is not theirs", 3, h("a", 1, 1), [h("a", 1, 1), h("b", 1, 1), h("c", 1, 0)], 1],
    ["all held elsewhere: nothing", 3, h("b", 1), [h("a", 3, 3), h("b", 1)], 0],
    ["two want more: the free part in proportion (4.5 → 4: the tie goes to the first name)", 6, h("b", 3, 0), [h("a", 1, 0), h("b", 3, 0)], 4],
    ["holding more than the cap (it was lowered): no more", 2, h("a", 3, 3), [h("a", 3, 3)], 3],
    ["no cap", Infinity, h("a", 0), [], Infinity],
  ];
  for (const [name, total, me, holders, want] of cases) assert.equal(countShare(total, me, holders), want, name);
});

test("the count shares of one snapshot add up to the cap", () => {
  for (const cap of [1, 2, 3, 7, 100]) {
    for (const all of [
      [h("a", 1, 0), h("b", 0, 0), h("c", 9, 0)],
      [h("a", 0, 0), h("b", 0, 0), h("c", 0, 0)],
    ]) {
      assert.equal(all.reduce((s, me) => s + countShare(cap, me, all), 0), cap, `cap ${cap}`);
    }
  }
});
