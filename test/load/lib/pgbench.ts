// pgbench against a scratch database of its own (created, initialised, dropped), as the yardstick
// of what this Postgres does on this machine right now.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { PG_URL, uniqueName } from "@flotilla/testkit";

const run = promisify(execFile);

export interface PgbenchOptions {
  clients?: number;
  threads?: number;
  seconds?: number;
  scale?: number;
  /** pgbench's built-in script: "simple-update" (-N, the default) or "tpcb-like". */
  builtin?: "simple-update" | "tpcb-like" | "select-only";
}

export interface PgbenchResult {
  tps: number;
  /** The command that was measured. */
  command: string;
  output: string;
}

/** Runs pgbench (-c 8 -j 2 -T 10 -N by default) on a fresh database and drops it. */
export async function pgbench(o: PgbenchOptions = {}): Promise<PgbenchResult> {
  const u = new URL(PG_URL);
  const conn = ["-h", u.hostname, "-p", u.port || "5432", "-U", decodeURIComponent(u.username || "postgres")];
  const db = uniqueName("pgbench");
  const args = ["-c", String(o.clients ?? 8), "-j", String(o.threads ?? 2), "-T", String(o.seconds ?? 10), "-b", o.builtin ?? "simple-update", "-n"];
  await run("createdb", [...conn, db]);
  try {
    await run("pgbench", [...conn, "-i", "-q", "-s", String(o.scale ?? 1), db]);
    const { stdout } = await run("pgbench", [...conn, ...args, db]);
    const m = /^tps = ([\d.]+)/m.exec(stdout);
    if (!m) throw new Error(`pgbench printed no tps:\n${stdout}`);
    return { tps: Number(m[1]), command: `pgbench ${args.join(" ")} (scale ${o.scale ?? 1})`, output: stdout };
  } finally {
    await run("dropdb", [...conn, "--force", "--if-exists", db]).catch((e: Error) => console.error(`dropping ${db}: ${e.message}`));
  }
}
