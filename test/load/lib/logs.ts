// Output of child processes: a tail in memory, optionally every line in a file per process, and a
// count of what was logged (pino JSON lines by level and message; other lines as "text").
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";

const LEVELS: Record<number, string> = { 10: "trace", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal" };
const MAX_MESSAGES = 200;

export interface LogMessage {
  level: string;
  msg: string;
  count: number;
  /** The first line logged with this level and message. */
  example: string;
}

export class ProcessLogs {
  private text = "";
  private readonly files = new Map<string, WriteStream>();
  private readonly messages = new Map<string, Map<string, LogMessage>>();

  /** Keeps the last `keep` characters in memory (each line prefixed with its process) and, with `dir`, every line in `<dir>/<name>.log`. */
  constructor(
    readonly dir?: string,
    private readonly keep = 200_000,
  ) {
    if (dir) mkdirSync(dir, { recursive: true });
  }

  private readonly taps: ((name: string, line: string) => void)[] = [];

  /** Also hands every line to `fn` (with its process's name), as it arrives. */
  tap(fn: (name: string, line: string) => void): void {
    this.taps.push(fn);
  }

  line(name: string, l: string): void {
    for (const fn of this.taps) fn(name, l);
    this.text = (this.text + `${name}| ${l}\n`).slice(-this.keep);
    this.count(name, l);
    if (!this.dir) return;
    let f = this.files.get(name);
    if (!f) this.files.set(name, (f = createWriteStream(path.join(this.dir, `${name}.log`), { flags: "a" })));
    f.write(l + "\n");
  }

  attach(name: string, stream: NodeJS.ReadableStream | null): void {
    if (stream) createInterface({ input: stream, crlfDelay: Infinity }).on("line", (l) => this.line(name, l));
  }

  tail(chars = this.keep): string {
    return this.text.slice(-chars);
  }

  /** The log file of a process, when logs go to a directory. */
  file(name: string): string | undefined {
    return this.dir ? path.join(this.dir, `${name}.log`) : undefined;
  }

  /** What each process logged, most frequent first (at most 200 distinct messages per process). */
  summary(): Map<string, LogMessage[]> {
    return new Map([...this.messages].map(([n, m]) => [n, [...m.values()].sort((a, b) => b.count - a.count)]));
  }

  /** Per process, how many lines it logged at warn or above (or as plain text), with its six most frequent messages; [] when none. */
  findings(): string[] {
    const out: string[] = [];
    for (const [proc, msgs] of this.summary()) {
      const bad = msgs.filter((m) => m.level !== "info" && m.level !== "debug" && m.level !== "trace");
      if (!bad.length) continue;
      out.push(`  ${proc}: ${bad.reduce((a, m) => a + m.count, 0)} line(s) at warn or above (or plain text)`);
      for (const m of bad.slice(0, 6)) out.push(`    ${String(m.count).padStart(6)} × ${m.level} ${m.msg}`);
    }
    return out;
  }

  async close(): Promise<void> {
    await Promise.all([...this.files.values()].map((f) => new Promise((r) => f.end(r))));
  }

  private count(name: string, l: string): void {
    if (!l.trim()) return;
    let level = "text";
    let msg = l.slice(0, 160);
    try {
      const j = JSON.parse(l) as { level?: number; msg?: string; err?: { message?: string } };
      level = LEVELS[j.level ?? 0] ?? String(j.level);
      msg = [j.msg, j.err?.message].filter(Boolean).join(": ").slice(0, 200) || msg;
    } catch {
      // not JSON: a plain line
    }
    let m = this.messages.get(name);
    if (!m) this.messages.set(name, (m = new Map()));
    const k = `${level} ${msg}`;
    const e = m.get(k);
    if (e) e.count++;
    else if (m.size < MAX_MESSAGES) m.set(k, { level, msg, count: 1, example: l.slice(0, 2000) });
  }
}
