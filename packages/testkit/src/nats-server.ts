import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

const NATS_SERVER = process.env.NATS_SERVER_BIN ?? "/usr/sbin/nats-server";

/** Whether a private nats-server can be started here. */
export function canRunNatsServer(): boolean {
  return existsSync(NATS_SERVER);
}

/**
 * A nats-server (JetStream, file storage) of the test's own, on its own port and store
 * directory, that the test may kill and start again (the machine's server is never touched).
 */
export class NatsServer {
  private child?: ChildProcess;
  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly args: string[] = [],
  ) {}

  /** A server on a free port (with more nats-server arguments, e.g. --user/--pass); `start()` runs it. */
  static async create(o: { args?: string[] } = {}): Promise<NatsServer> {
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const { port } = srv.address() as net.AddressInfo;
    await new Promise((r) => srv.close(r));
    return new NatsServer(port, mkdtempSync(path.join(tmpdir(), "flotilla-nats-")), o.args);
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts the server and waits until it accepts connections. */
  async start(): Promise<void> {
    this.child = spawn(NATS_SERVER, ["-a", "127.0.0.1", "-p", String(this.port), "-js", "-sd", this.dir, ...this.args], { stdio: "ignore" });
    for (let i = 0; i < 100; i++) {
      const up = await new Promise<boolean>((resolve) => {
        const s = net.connect(this.port, "127.0.0.1");
        s.once("connect", () => (s.destroy(), resolve(true)));
        s.once("error", () => resolve(false));
      });
      if (up) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`nats-server did not start on port ${this.port}`);
  }

  /** Kills the server (SIGKILL by default, as a crash) and waits for it to exit. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const c = this.child;
    this.child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    c.kill(signal);
    await exited;
  }

  /** Kills the server and removes its store. */
  async destroy(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
