// Process supervision for `npm start`: a process that exits is started again after a growing
// delay, and the rest of the stack keeps running.
import { spawn } from "node:child_process";

/** Restart delay after the n-th exit in a row: 1 s doubling to 30 s. */
export const restartDelayMs = (n) => Math.min(1000 * 2 ** (n - 1), 30_000);

/** Exit code of a configuration error (runService): a restart cannot fix it. */
export const CONFIG_ERROR = 2;

/**
 * Runs `command args` as `name`, its output prefixed with the name, and starts it again
 * whenever it exits, after `delayMs(n)` for the n-th exit in a row (a run of `stableMs` or
 * longer resets the count). Exit code 2 is not retried: `onFatal(code)` is called instead.
 * `stop()` ends it (SIGTERM) and resolves once it has exited; no restart follows.
 */
export function supervise({ name, command = process.execPath, args = [], cwd, env, out = process.stdout, err = process.stderr, delayMs = restartDelayMs, stableMs = 60_000, onFatal = () => {} }) {
  const prefix = `${name.padEnd(14)}| `;
  let child;
  let stopped = false;
  let timer;
  let restarts = 0;

  const pipe = (stream, to) => {
    let buf = "";
    stream.on("data", (d) => {
      buf += d;
      const lines = buf.split("\n");
      buf = lines.pop();
      for (const l of lines) to.write(prefix + l + "\n");
    });
    stream.on("end", () => buf && to.write(prefix + buf + "\n"));
  };

  const run = (crashes) => {
    const startedAt = Date.now();
    child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    pipe(child.stdout, out);
    pipe(child.stderr, err);
    child.on("exit", (code, signal) => {
      if (stopped) return;
      if (code === CONFIG_ERROR) {
        err.write(`${prefix}exited with a configuration error (code ${code}); not restarting\n`);
        onFatal(code);
        return;
      }
      const n = Date.now() - startedAt >= stableMs ? 1 : crashes + 1;
      const ms = delayMs(n);
      restarts++;
      err.write(`${prefix}exited (${signal ?? `code ${code}`}); restarting in ${ms / 1000} s (${n} in a row)\n`);
      timer = setTimeout(() => {
        timer = undefined;
        if (!stopped) run(n);
      }, ms);
    });
  };
  run(0);

  return {
    name,
    get child() {
      return child;
    },
    /** Times it was started again. */
    get restarts() {
      return restarts;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
