import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, bool, duration, int, loadConfig, parseDuration, port, url } from "@flotilla/config";

const durations: Array<[string, string, number]> = [
  ["milliseconds are read as such", "500ms", 500],
  ["seconds are multiplied by a thousand", "30s", 30_000],
  ["minutes are read", "5m", 300_000],
  ["compound durations add up", "1h30m", 5_400_000],
  ["a bare number is seconds, as Karmada's flags", "300", 300_000],
];
for (const [name, raw, ms] of durations) test(name, () => assert.equal(parseDuration(raw), ms));

test("a malformed duration is rejected", () => assert.throws(() => parseDuration("5 minutes")));

const schema = { PORT: port(8080), DEBUG: bool(false), TIMEOUT: duration("5m"), DB: url("postgres://x/y", ["postgres"]), N: int(undefined, { min: 1 }) };

test("defaults fill what the environment leaves out", () => {
  const c = loadConfig(schema, { N: "3" });
  assert.deepEqual({ ...c }, { PORT: 8080, DEBUG: false, TIMEOUT: 300_000, DB: "postgres://x/y", N: 3 });
  assert.ok(Object.isFrozen(c));
});

test("every bad value is reported at once, by name", () => {
  assert.throws(
    () => loadConfig(schema, { PORT: "99999", DEBUG: "maybe", TIMEOUT: "soon", DB: "http://x" }),
    (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.deepEqual(e.problems.map((p) => p.split(":")[0]), ["PORT", "DEBUG", "TIMEOUT", "DB", "N"]);
      return true;
    },
  );
});
