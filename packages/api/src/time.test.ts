import { test } from "node:test";
import assert from "node:assert/strict";
import { microTime, parseTime, rfc3339 } from "./time.js";

test("Kubernetes timestamps", () => {
  const cases: Array<[string, string, string]> = [
    ["a Date is written with whole seconds in UTC", rfc3339(new Date("2026-11-27T01:02:03.456Z")), "2026-11-27T01:02:03Z"],
    ["milliseconds since the epoch give the same", rfc3339(Date.parse("2026-11-27T01:02:03.456Z")), "2026-11-27T01:02:03Z"],
    ["MicroTime keeps the milliseconds as microseconds", microTime(new Date("2026-11-27T01:02:03.456Z")), "2026-11-27T01:02:03.456000Z"],
  ];
  for (const [name, got, want] of cases) assert.equal(got, want, name);
});

test("parseTime", () => {
  const cases: Array<[string, string | undefined, number | undefined]> = [
    ["an RFC 3339 timestamp is its milliseconds", "2026-11-27T01:02:03Z", Date.UTC(2026, 10, 27, 1, 2, 3)],
    ["a MicroTime keeps its milliseconds", "2026-11-27T01:02:03.456000Z", Date.UTC(2026, 10, 27, 1, 2, 3, 456)],
    ["absent is undefined", undefined, undefined],
    ["empty is undefined", "", undefined],
    ["garbage is undefined", "yesterday-ish", undefined],
  ];
  for (const [name, ts, want] of cases) assert.equal(parseTime(ts), want, name);
});
