import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Where Debian's PostgreSQL 15 keeps initdb/pg_ctl (PG_BIN overrides). */
const PG_BIN = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";

/** Whether a private Postgres server can be started here (the binaries exist). */
export function canRunPostgresServer(): boolean {
  return existsSync(path.join(PG_BIN, "pg_ctl")) && existsSync(path.join(PG_BIN, "initdb"));
}

/**
 * A Postgres server of the test's own, in a temporary directory on its own port, that the test
 * may stop and start at will (the machine's server is never touched). Postgres refuses to run
 * as root, so under root every command runs as the `postgres` user.
 */
export class PostgresServer {
  readonly dir: string;
  private _port: number;
  private readonly asRoot = process.getuid?.() === 0;

  private constructor(dir: string, port: number) {
    this.dir = dir;
    this._port = port;
  }

  get port(): number {
    return this._port;
  }

  /**
   * initdb (trust auth, fsync off) and start on a random port in 55432..60431; a port taken
   * meanwhile (the range overlaps the ephemeral ports) is tried again with another, up to 5 times.
   * `maxConnections` (default 100, as Debian's): for a stack of many service processes.
   * `settings`: more server settings (e.g. `shared_preload_libraries`), written as given.
   */
  static async start(o: { maxConnections?: number; settings?: Record<string, string> } = {}): Promise<PostgresServer> {
    const dir = mkdtempSync(path.join(tmpdir(), "flotilla-pg-"));
    const s = new PostgresServer(dir, 0);
    if (s.asRoot) chownSync(dir, ...(await s.postgresIds()));
    await s.pg("initdb", ["-D", s.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
    for (let attempt = 1; ; attempt++) {
      s._port = 55432 + Math.floor(Math.random() * 5000);
      // sockets in the data directory (the default /var/run/postgresql may not be writable)
      writeFileSync(
        path.join(s.data, "postgresql.auto.conf"),
        `port = ${s.port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${s.data}'\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\nmax_connections = ${o.maxConnections ?? 100}\nshared_buffers = 32MB\n` +
          Object.entries(o.settings ?? {})
            .map(([k, v]) => `${k} = '${v.replace(/'/g, "''")}'\n`)
            .join(""),
      );
      try {
        await s.startServer();
        return s;
      } catch (e) {
        const log = existsSync(path.join(dir, "log")) ? readFileSync(path.join(dir, "log"), "utf8") : "";
        if (attempt >= 5 || !/Address already in use/.test(log)) throw e;
        rmSync(path.join(dir, "log"), { force: true });
      }
    }
  }

  get data(): string {
    return path.join(this.dir, "data");
  }

  /** postgres://postgres@127.0.0.1:port/<database>. */
  url(database = "postgres"): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the server and waits until it accepts connections. */
  async startServer(): Promise<void> {
    await this.pg("pg_ctl", ["-D", this.data, "-l", path.join(this.dir, "log"), "-w", "-t", "30", "-o", `-p ${this.port}`, "start"]);
  }

  /** Fast shutdown: every session is terminated (FATAL 57P01), then the server exits. */
  async stopServer(mode: "fast" | "immediate" = "fast"): Promise<void> {
    await this.pg("pg_ctl", ["-D", this.data, "-w", "-t", "30", "-m", mode, "stop"]);
  }

  /** Stops the server (when running) and removes its directory. */
  async destroy(): Promise<void> {
    await this.stopServer("immediate").catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async postgresIds(): Promise<[number, number]> {
    const { stdout } = await run("id", ["postgres"]);
    const uid = Number(/uid=(\d+)/.exec(stdout)?.[1]);
    const gid = Number(/gid=(\d+)/.exec(stdout)?.[1]);
    return [uid, gid];
  }

  private async pg(bin: string, args: string[]): Promise<void> {
    const exe = path.join(PG_BIN, bin);
    const [cmd, argv] = this.asRoot ? ["runuser", ["-u", "postgres", "--", exe, ...args]] : [exe, args];
    await run(cmd, argv, { cwd: this.dir, timeout: 60_000 });
  }
}
