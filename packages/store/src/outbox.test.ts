import { test } from "node:test";
import assert from "node:assert/strict";
import { publishedPrefix, type OutboxRow } from "./outbox.js";

const row = (rv: string, id: string): OutboxRow => ({ id, rv, gk: "apps/Deployment", namespace: "default", name: `d${id}`, uid: "u", type: "ADDED", api_version: "apps/v1", generation: "1", index_keys: null });

test("the relay's cursor moves up to the first row the stream does not have", () => {
  const rows = [row("10", "3"), row("10", "4"), row("11", "2"), row("12", "5")];
  const cases: { name: string; published: string[]; want: { rv: string; id: string } | undefined }[] = [
    { name: "all published", published: ["3", "4", "2", "5"], want: { rv: "12", id: "5" } },
    { name: "none published", published: [], want: undefined },
    { name: "the first missing", published: ["4", "2", "5"], want: undefined },
    { name: "a gap: stops before it", published: ["3", "4", "5"], want: { rv: "10", id: "4" } },
    { name: "order of the acknowledgements does not matter", published: ["2", "4", "3"], want: { rv: "11", id: "2" } },
  ];
  for (const c of cases) assert.deepEqual(publishedPrefix(rows, c.published), c.want, c.name);
  assert.equal(publishedPrefix([], ["1"]), undefined);
});
