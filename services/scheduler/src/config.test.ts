import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "@flotilla/config";
import { configSchema } from "./config.js";
import { settingsFrom } from "./settings.js";

test("BINDING_UPDATE_DEBOUNCE is off unless set", () => {
  assert.equal(settingsFrom(loadConfig(configSchema, {})).bindingUpdateDebounceMs, 0);
});

test("BINDING_UPDATE_DEBOUNCE takes a duration", () => {
  assert.equal(settingsFrom(loadConfig(configSchema, { BINDING_UPDATE_DEBOUNCE: "2s" })).bindingUpdateDebounceMs, 2000);
  assert.equal(settingsFrom(loadConfig(configSchema, { BINDING_UPDATE_DEBOUNCE: "1500ms" })).bindingUpdateDebounceMs, 1500);
  assert.equal(settingsFrom(loadConfig(configSchema, { BINDING_UPDATE_DEBOUNCE: "0" })).bindingUpdateDebounceMs, 0);
});

for (const bad of ["soon", "-5s", "5 minutes"]) {
  test(`BINDING_UPDATE_DEBOUNCE=${JSON.stringify(bad)} is refused at start, naming the variable`, () => {
    assert.throws(
      () => loadConfig(configSchema, { BINDING_UPDATE_DEBOUNCE: bad }),
      (e: unknown) => e instanceof ConfigError && e.problems.length === 1 && e.problems[0] === `BINDING_UPDATE_DEBOUNCE: not a duration (e.g. 500ms, 30s, 5m): ${JSON.stringify(bad)}`,
    );
  });
}
