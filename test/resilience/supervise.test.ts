// `npm start` keeps the stack running: scripts/supervise.mjs starts a process that exits again.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { eventually } from "@flotilla/testkit";

interface Supervised {
  readonly restarts: number;
  readonly child: { pid?: number; exitCode: number | null };
  stop(): Promise<void>;
}
type Supervise = (o: { name: string; args: string[]; out?: NodeJS.WritableStream; err?: NodeJS.WritableStream; delayMs?: (n: number) => number; stableMs?: number; onFatal?: (code: number) => void }) => Supervised;

const script = path.resolve(fileURLToPath(new URL(".", import.meta.url)), "../../scripts/supervise.mjs");
const load = async () => (await import(script)) as { supervise: Supervise; restartDelayMs: (n: number) => number };

/** A process that exits with `code` on its first `failures` runs (counted in a file), then stays up. */
function flaky(dir: string, failures: number, code = 1): string[] {
  const count = path.join(dir, "runs");
  return [
    "-e",
    `const fs = require("fs"); const n = fs.existsSync(${JSON.stringify(count)}) ? Number(fs.readFileSync(${JSON.stringify(count)}, "utf8")) : 0;
     fs.writeFileSync(${JSON.stringify(count)}, String(n + 1)); console.log("run " + (n + 1));
     if (n < ${failures}) { console.error("crashing"); process.exit(${code}); }
     setInterval(() => {}, 1000);`,
  ];
}

function capture() {
  const s = new PassThrough();
  let text = "";
  s.on("data", (d) => (text += d));
  return { s, text: () => text };
}

test("the restart delay grows from 1 s to at most 30 s", async () => {
  const { restartDelayMs } = await load();
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 20].map(restartDelayMs), [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
});

test("a process that exits is started again, with the delay growing, until it stays up; stop() ends it", async () => {
  const { supervise } = await load();
  const dir = mkdtempSync(path.join(tmpdir(), "flotilla-supervise-"));
  const out = capture();
  const err = capture();
  const delays: number[] = [];
  const s = supervise({ name: "svc", args: flaky(dir, 3), out: out.s, err: err.s, delayMs: (n) => (delays.push(n), 20) });
  try {
    await eventually(() => out.text().includes("svc           | run 4"), { timeoutMs: 10_000 });
    assert.equal(s.restarts, 3);
    assert.deepEqual(delays, [1, 2, 3]);
    assert.match(err.text(), /svc {11}\| exited \(code 1\); restarting in 0\.02 s \(1 in a row\)/);
    assert.match(err.text(), /svc {11}\| crashing/);
  } finally {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(s.restarts, 3, "no restart after stop()");
});

test("a configuration error (exit code 2) is not retried", async () => {
  const { supervise } = await load();
  const dir = mkdtempSync(path.join(tmpdir(), "flotilla-supervise-"));
  const err = capture();
  let fatal: number | undefined;
  const s = supervise({ name: "svc", args: flaky(dir, 1, 2), out: capture().s, err: err.s, delayMs: () => 20, onFatal: (c) => (fatal = c) });
  try {
    await eventually(() => fatal === 2, { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(s.restarts, 0);
    assert.match(err.text(), /configuration error \(code 2\); not restarting/);
  } finally {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
