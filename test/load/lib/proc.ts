// Processes from the outside: free ports, CPU time and RSS from /proc (Linux), the machine's CPU,
// pgrep, and a sampler that keeps each process's peak RSS.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";

/** The lowest port the kernel hands to outgoing connections (Linux's ip_local_port_range). */
function ephemeralLow(): number {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

const handedOut = new Set<number>();

/**
 * A TCP port free on 127.0.0.1 right now, for a child process to listen on soon. Taken below the
 * kernel's ephemeral range: a port the kernel hands out (bind to 0) can be given next to an
 * outgoing connection (to Postgres, NATS, a member) before the child binds it, and the child fails
 * with EADDRINUSE. Never the same port twice from this process.
 */
export async function freePort(): Promise<number> {
  const high = Math.min(ephemeralLow(), 65536) - 1;
  const low = Math.max(1024, high - 20_000);
  for (let attempt = 0; attempt < 200; attempt++) {
    const p = low + Math.floor(Math.random() * (high - low + 1));
    if (handedOut.has(p)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.once("error", () => resolve(false));
      s.listen(p, "127.0.0.1", () => s.close(() => resolve(true)));
    });
    if (free) {
      handedOut.add(p);
      return p;
    }
  }
  throw new Error(`no free port found in ${low}..${high}`);
}

const TICKS_PER_SECOND = 100; // USER_HZ on every Linux we run on

/** Fields of /proc/<pid>/stat after the command name; index 0 is field 3 (state). */
function statFields(pid: number): string[] | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    return s.slice(s.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) the process has used so far, in ms; NaN when it is gone. */
export function cpuMs(pid: number | undefined): number {
  const f = pid === undefined ? undefined : statFields(pid);
  return f ? ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_SECOND : NaN;
}

/** CPU time of the process's children that have exited and been waited for, in ms. */
export function childrenCpuMs(pid: number): number {
  const f = statFields(pid);
  return f ? ((Number(f[13]) + Number(f[14])) * 1000) / TICKS_PER_SECOND : NaN;
}

/** A "<field>: N kB" line of /proc/<pid>/status in bytes; 0 when the process is gone. */
function statusBytes(pid: number | undefined, field: "VmRSS" | "VmHWM"): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Resident set size in bytes (VmRSS); 0 when the process is gone. */
export const rssBytes = (pid: number | undefined) => statusBytes(pid, "VmRSS");

/** The largest resident set size the process has had, as the kernel kept it (VmHWM), in bytes; 0 when it is gone. */
export const peakRssBytes = (pid: number | undefined) => statusBytes(pid, "VmHWM");

export interface MachineCpu {
  /** Jiffies every core spent busy so far (not idle or waiting for I/O). */
  busy: number;
  total: number;
}

/** The whole machine's CPU so far (/proc/stat), to tell how much of it everything running took. */
export function machineCpu(): MachineCpu {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

/** The busy share (0..1) of all the machine's cores between two machineCpu() readings; NaN when none passed. */
export function busyShare(a: MachineCpu, b: MachineCpu): number {
  return b.total > a.total ? (b.busy - a.busy) / (b.total - a.total) : NaN;
}

/** Pids of the processes whose name is exactly `name` (`pgrep -x`); [] when none or no pgrep. */
export function pgrep(name: string): number[] {
  try {
    return execFileSync("pgrep", ["-x", name], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * CPU ms of every process named `name` (pgrep -x), plus what its exited children used as seen by
 * their parents (the Postgres postmaster reaps its backends, so their CPU stays counted after
 * they exit).
 */
export function cpuMsByName(name: string): number {
  const pids = pgrep(name);
  const set = new Set(pids);
  let total = 0;
  for (const pid of pids) {
    total += cpuMs(pid) || 0;
    const parent = Number(statFields(pid)?.[1]);
    if (!set.has(parent)) total += childrenCpuMs(pid) || 0;
  }
  return total;
}

/** Samples the RSS of named processes every `intervalMs` and keeps each one's peak. */
export class RssSampler {
  readonly peak = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pids: () => ReadonlyMap<string, number | undefined>,
    intervalMs = 250,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  sample(): void {
    for (const [name, pid] of this.pids()) {
      const rss = rssBytes(pid);
      if (rss > (this.peak.get(name) ?? 0)) this.peak.set(name, rss);
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

export interface CpuSettled {
  /** performance.now() at the start of the first quiet window; undefined when none came before the timeout. */
  settledAt?: number;
  /** CPU ms of each process (in the order given) at `settledAt`, or at the end when it never settled. */
  cpuAt: number[];
  /** The lowest share of one core the processes used together over any full window, and when that window began. */
  lowest: { share: number; at: number } | undefined;
}

/**
 * Samples the CPU of the processes every `intervalMs` until, together, they used less than
 * `share` of one core (0.05: 5 %) over `windowMs` — "settled" is the start of that window — or
 * `timeoutMs` passed. `pids` is read at every sample (a process restarted under the same name
 * counts from its new pid); a process gone counts 0.
 */
export async function waitCpuSettled(pids: () => readonly (number | undefined)[], o: { share: number; windowMs: number; timeoutMs: number; intervalMs?: number }): Promise<CpuSettled> {
  const samples: { t: number; each: number[]; total: number }[] = [];
  const deadline = performance.now() + o.timeoutMs;
  let lowest: CpuSettled["lowest"];
  for (;;) {
    const t = performance.now();
    const each = pids().map((p) => cpuMs(p) || 0);
    const now = { t, each, total: each.reduce((a, b) => a + b, 0) };
    samples.push(now);
    // the latest sample at least a window before this one
    let j = -1;
    for (let i = samples.length - 1; i >= 0; i--) {
      if (samples[i]!.t <= t - o.windowMs) {
        j = i;
        break;
      }
    }
    if (j >= 0) {
      const from = samples[j]!;
      const used = (now.total - from.total) / (t - from.t);
      if (!lowest || used < lowest.share) lowest = { share: used, at: from.t };
      if (used < o.share) return { settledAt: from.t, cpuAt: from.each, lowest };
      samples.splice(0, j); // older ones are no window's start any more
    }
    if (t > deadline) return { cpuAt: each, lowest };
    await new Promise<void>((r) => setTimeout(r, o.intervalMs ?? 250));
  }
}
