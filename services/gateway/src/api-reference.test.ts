import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { apiReference } from "./logic/api-reference.js";
import { openApiDocument } from "./logic/openapi.js";

const FILE = fileURLToPath(new URL("../../../docs/karmada-api.md", import.meta.url));

test("docs/karmada-api.md lists every Karmada kind and field the gateway accepts (regenerate with UPDATE_API_REFERENCE=1)", async () => {
  const want = apiReference(openApiDocument("reference") as Parameters<typeof apiReference>[0]);
  if (process.env.UPDATE_API_REFERENCE) await writeFile(FILE, want);
  const have = await readFile(FILE, "utf8").catch(() => "");
  assert.ok(have === want, "docs/karmada-api.md is out of date with the API: run UPDATE_API_REFERENCE=1 node --conditions=source --import tsx --test services/gateway/src/api-reference.test.ts");
  for (const kind of ["PropagationPolicy", "ClusterPropagationPolicy", "OverridePolicy", "ClusterOverridePolicy", "ClusterTaintPolicy", "Cluster", "ResourceBinding", "ClusterResourceBinding", "Work"]) {
    assert.match(want, new RegExp(`^## ${kind}$`, "m"), kind);
  }
  for (const path of ["spec.placement.clusterAffinities[].overflowAffinities[].affinityName", "spec.failover.application.statePreservation.rules[].jsonPath", "spec.activationPreference", "spec.overrideRules[].overriders.imageOverrider[].component"]) {
    assert.ok(want.includes(`\`${path}\``), path);
  }
});
