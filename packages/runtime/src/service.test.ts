import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));

/** Runs `body` in a process of its own with guardProcess installed; returns its exit code and output. */
function guarded(body: string) {
  const script = `
    import { guardProcess } from "@flotilla/runtime";
    import { createLogger } from "@flotilla/log";
    guardProcess("svc", createLogger({ name: "svc", level: "error" }));
    ${body}`;
  const r = spawnSync(process.execPath, ["--conditions=source", "--import", "tsx", "--input-type=module", "-e", script], { cwd: here, encoding: "utf8", timeout: 30_000 });
  return { code: r.status, out: r.stdout + r.stderr };
}

test("a fault thrown inside the postgres driver is logged and the process carries on", () => {
  const r = guarded(`
    const e = new TypeError("Cannot read properties of null (reading 'write')");
    e.stack = "TypeError: x\\n    at Immediate.nextWrite (file:///app/node_modules/postgres/src/connection.js:255:22)";
    setImmediate(() => { throw e; });
    Promise.reject(Object.assign(new Error("write CONNECTION_CLOSED 127.0.0.1:5432"), { code: "CONNECTION_CLOSED" }));
    setTimeout(() => { console.log("still running"); process.exit(0); }, 200);`);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /still running/);
  assert.match(r.out, /postgres driver fault caught/);
});

test("any other uncaught exception ends the process with code 1 and says why", () => {
  const r = guarded(`setImmediate(() => { throw new Error("boom"); }); setTimeout(() => process.exit(0), 2000);`);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /svc: exiting after uncaught exception/);
  assert.match(r.out, /boom/);
});

test("an unhandled rejection that is not the driver's ends the process with code 1", () => {
  const r = guarded(`Promise.reject(new Error("lost")); setTimeout(() => process.exit(0), 2000);`);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /svc: exiting after unhandled promise rejection/);
});
