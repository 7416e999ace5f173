import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { NATS_URL, freshDatabase, uniqueName } from "@flotilla/testkit";

const here = fileURLToPath(new URL(".", import.meta.url));

/** Runs a service whose start throws `failure` the first time; returns its exit code and output. */
async function service(failure: string) {
  const db = await freshDatabase();
  try {
    const script = `
      import { runService } from "@flotilla/runtime";
      let attempt = 0;
      await runService("svc", {}, async ({ starting }) => {
        attempt++;
        starting({ stop: async () => console.log("stopped attempt " + attempt) });
        if (attempt === 1) throw ${failure};
        console.log("started on attempt " + attempt);
        setTimeout(() => process.kill(process.pid, "SIGTERM"), 100);
        return { stop: async () => console.log("stopped") };
      });`;
    const env = { ...process.env, DATABASE_URL: db.url, NATS_URL, EVENTS_STREAM: uniqueName("SVC").toUpperCase(), EVENTS_PREFIX: uniqueName("svc"), LOG_LEVEL: "warn" };
    const r = spawnSync(process.execPath, ["--conditions=source", "--import", "tsx", "--input-type=module", "-e", script], { cwd: here, env, encoding: "utf8", timeout: 60_000 });
    return { code: r.status, out: r.stdout + r.stderr };
  } finally {
    await db.drop();
  }
}

test("Postgres going away while a service starts: what was started is stopped, and the service is started again", async () => {
  const r = await service(`Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED", errno: -111 })`);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /a dependency went away while starting; starting again/);
  assert.ok(r.out.indexOf("stopped attempt 1") >= 0 && r.out.indexOf("stopped attempt 1") < r.out.indexOf("started on attempt 2"), r.out);
  assert.match(r.out, /\nstopped\n/);
});

test("any other failure to start ends the process with code 1 and says why", async () => {
  const r = await service(`new Error("a bug in start")`);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /svc: cannot start: Error: a bug in start/);
  assert.doesNotMatch(r.out, /started on attempt/);
});

/** Runs a service whose stop never ends; `signals` SIGTERMs are sent, 100 ms apart, once it runs. */
async function hangingStop(signals: number, timeout: string) {
  const db = await freshDatabase();
  try {
    const script = `
      import { runService } from "@flotilla/runtime";
      await runService("svc", {}, async () => {
        console.log("started");
        for (let i = 0; i < ${signals}; i++) setTimeout(() => process.kill(process.pid, "SIGTERM"), 100 * (i + 1));
        return { stop: () => new Promise(() => {}) };
      });`;
    const env = { ...process.env, DATABASE_URL: db.url, NATS_URL, EVENTS_STREAM: uniqueName("SVC").toUpperCase(), EVENTS_PREFIX: uniqueName("svc"), LOG_LEVEL: "info", SHUTDOWN_TIMEOUT: timeout };
    const t0 = Date.now();
    const r = spawnSync(process.execPath, ["--conditions=source", "--import", "tsx", "--input-type=module", "-e", script], { cwd: here, env, encoding: "utf8", timeout: 60_000 });
    return { code: r.status, out: r.stdout + r.stderr, ms: Date.now() - t0 };
  } finally {
    await db.drop();
  }
}

test("a stop that hangs ends with code 1 after SHUTDOWN_TIMEOUT, saying so", async () => {
  const r = await hangingStop(1, "1500ms");
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /did not stop within SHUTDOWN_TIMEOUT; exiting anyway/);
  assert.ok(r.ms < 30_000, `took ${r.ms} ms`);
});

test("a second signal while stopping exits at once", async () => {
  const r = await hangingStop(2, "60s");
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /second signal while shutting down: exiting now/);
  assert.doesNotMatch(r.out, /did not stop within SHUTDOWN_TIMEOUT/);
});
