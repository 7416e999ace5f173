// Shared by `npm start` and `npm test`: install and build when needed, check Postgres and NATS.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, statSync, readdirSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" }, ...opts });
  if (r.status !== 0) {
    console.error(`\n${cmd} ${args.join(" ")} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

/** `npm ci` when node_modules is missing or older than the lockfile. */
export function ensureInstalled() {
  const marker = path.join(root, "node_modules", ".package-lock.json");
  const lock = path.join(root, "package-lock.json");
  if (!existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs) {
    console.log("> installing dependencies (npm ci)");
    run("npm", ["ci", "--no-audit", "--no-fund"]);
  }
}

/**
 * After `ensureInstalled()`: when this script runs on another Node than the one the project pins
 * (`node_modules/.bin/node`, the npm package node@24; a fresh clone's first `npm start` finds the
 * machine's node, since node_modules did not exist yet), runs this same script again on the pinned
 * one and exits with its code. Ctrl-C reaches the child through the process group; SIGTERM and
 * SIGHUP are passed on.
 */
export function onPinnedNode() {
  const pinned = path.join(root, "node_modules", ".bin", "node");
  if (!existsSync(pinned) || process.env.FLOTILLA_PINNED_NODE === "1") return;
  const want = spawnSync(pinned, ["-p", "process.version"], { encoding: "utf8" }).stdout?.trim();
  if (!want || want === process.version) return;
  console.log(`> running on Node ${want} (node_modules/.bin/node) instead of ${process.version}`);
  const child = spawn(pinned, [...process.execArgv, ...process.argv.slice(1)], { cwd: process.cwd(), stdio: "inherit", env: { ...process.env, FLOTILLA_PINNED_NODE: "1" } });
  // Ctrl-C reaches the child with the whole process group: this process only waits for it
  process.on("SIGINT", () => {});
  for (const sig of ["SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1)));
  return new Promise(() => {});
}

/** Generates code and compiles every package (turbo skips what is up to date). */
export function build() {
  console.log("> building (turbo run build)");
  run("npx", ["turbo", "run", "build", "--log-prefix=none", "--output-logs=errors-only"]);
}

function reachable(url, defPort) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect({ host: u.hostname || "127.0.0.1", port: Number(u.port || defPort) });
    s.setTimeout(1500);
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("error", () => resolve(false));
    s.once("timeout", () => (s.destroy(), resolve(false)));
  });
}

export const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/flotilla";
export const NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

/** Exits with instructions when Postgres or NATS is not reachable. */
export async function ensureBackends() {
  const pg = await reachable(DATABASE_URL, 5432);
  const nats = await reachable(NATS_URL, 4222);
  if (pg && nats) return;
  console.error("\nFlotilla needs PostgreSQL and NATS with JetStream:");
  if (!pg) console.error(`  - PostgreSQL is not reachable at ${new URL(DATABASE_URL).host} (DATABASE_URL)`);
  if (!nats) console.error(`  - NATS is not reachable at ${new URL(NATS_URL).host} (NATS_URL)`);
  console.error(`
Start them with Docker:
    docker compose up -d postgres nats
or on Debian/Ubuntu:
    sudo apt-get install -y postgresql nats-server
    sudo pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start
    nats-server -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server &
Postgres must accept the user in DATABASE_URL (default postgres, trust auth on 127.0.0.1).`);
  process.exit(1);
}

/** Files matching a suffix below dir (recursively), skipping node_modules and dist. */
export function findFiles(dir, suffix) {
  const out = [];
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name === "dist" || e.name.startsWith(".")) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...findFiles(p, suffix));
    else if (e.name.endsWith(suffix)) out.push(p);
  }
  return out.sort();
}

export { execFileSync };
