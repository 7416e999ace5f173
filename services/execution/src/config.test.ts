import { test } from "node:test";
import assert from "node:assert/strict";
import { loadConfig } from "@flotilla/config";
import { configSchema } from "./config.js";
import { DEFAULT_SETTINGS } from "./app.js";

test("member sharding is on unless MEMBER_SHARDING=false: a scaled Deployment that copies no flag shares the members", () => {
  assert.equal(loadConfig(configSchema, {}).MEMBER_SHARDING, true);
  assert.equal(DEFAULT_SETTINGS.MEMBER_SHARDING, true);
  assert.equal(loadConfig(configSchema, { MEMBER_SHARDING: "false" }).MEMBER_SHARDING, false);
});
