import { randomUUID } from "node:crypto";
import { trace } from "@opentelemetry/api";
import type { Logger } from "pino";
import type { Sql } from "@flotilla/store";
import { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from "./backoff.js";
import { classifyFailure, coveredByFailure, failureSignature, newerVersion, nextStreak, type FailureStreak } from "./classify.js";
import { ControllerMetrics, type ControllerSnapshot, type ErrorReason } from "./metrics.js";
import { WorkQueue, type Lane } from "./queue.js";
import type { Reconciler, Result } from "./result.js";
import type { KeyLocks } from "@flotilla/store";
import { DurableTimers } from "./timers.js";
import { contextFrom, inSpan, traceContextOf } from "./tracing.js";

export interface ControllerOptions {
  reconciler: Reconciler<string>;
  /** Holds the durable timers. */
  sql: Sql;
  /** The service's logger; the controller adds `{ controller }`, each run `{ key, reconcileId }`. */
  log: Logger;
  /** Reconciles running at once (default 4). */
  concurrency?: number;
  /**
   * Every resyncMs, enqueue everything `listKeys` returns (default 0: off). A key may come with
   * its object's resourceVersion: a key parked after a terminal failure is run again by a
   * resync only when the version listed is newer than the one it failed on.
   */
  resyncMs?: number;
  listKeys?: () => Promise<Array<string | KeyVersion>>;
  /** Per-key retry backoff after errors (default 5 ms .. 1000 s, controller-runtime's). */
  backoff?: Partial<BackoffOptions>;
  /** A reconcile running longer than this is aborted and counts as an error (default 60 s; 0 = none). */
  timeoutMs?: number;
  /** How long an aborted reconcile may keep its key before the runner lets go (default 5 s). */
  abortGraceMs?: number;
  /** Timer poll interval (default 250 ms); nearer timers are slept until exactly. */
  timerPollMs?: number;
  /**
   * Keeps the durable timers to this replica (rows under `<name>@<timerScope>`) instead of
   * sharing them with every replica: for keys only one replica may act on (sharded work), whose
   * "come back after" another replica would otherwise claim and drop. A replica that takes a
   * key over must then look at it itself (it does not inherit the previous holder's timers).
   */
  timerScope?: string;
  /** A claimed timer whose reconcile never finished fires again after this (default max(2 × timeoutMs, 60 s)). */
  timerLeaseMs?: number;
  /** stop() waits this long for running reconciles before aborting them (default 30 s). */
  stopTimeoutMs?: number;
  /** Consecutive failures of a key from which each retry is logged at warn (default 3). */
  warnAfterFailures?: number;
  /**
   * Cross-replica exclusion of keys (see key-locks.ts): a reconcile runs only while this process
   * holds the key's lock; a key another replica holds is tried again after `busyRetryMs` (50 ms
   * by default, doubling up to 1 s while it stays held), its waiters kept. Default: none (every
   * replica may reconcile a key at once).
   */
  keyLocks?: KeyLocks;
  busyRetryMs?: number;
  /**
   * A failure that looks like bad data or a bug (TypeError, InvalidError, …; see
   * `classifyFailure`) becomes terminal once it has happened this many times in a row, with the
   * same message, on the same version of the object (default 5; 0 = never).
   */
  terminalAfterRepeats?: number;
}

/** A key and the resourceVersion of its object, as a resync lists it. */
export interface KeyVersion {
  key: string;
  resourceVersion?: string;
}

/** What a wake-up says about the key's own object (only when it is about that object). */
export interface WakeHint {
  resourceVersion?: string;
  /** When the change that woke the key was stored (ms since the epoch), for the wake-up lag metric. */
  since?: number;
  /**
   * The trace context (W3C traceparent) of the change that woke the key: its reconcile continues
   * that trace. Without one, a key queued from inside a span (a reconcile that fans out to related
   * keys and waits for them) continues that span's trace.
   */
  trace?: string;
}

/** Why a key is parked: its last reconcile failed terminally. */
export interface TerminalFailure {
  /** The version of the key's object the failure was on, when the reconciler said (`ctx.observed`). */
  version?: string;
  /** `name: message` of the error. */
  error: string;
  /** Identical failures in a row that led here. */
  repeats: number;
  /** When (ms since the epoch). */
  at: number;
}

export interface Controller {
  readonly name: string;
  /** Starts workers, the timer poller and the resync. Keys enqueued before start wait for it. */
  start(): void;
  /** Stops taking work, waits (bounded) for running reconciles, stops pollers; pending enqueue promises reject with StoppedError. */
  stop(): Promise<void>;
  /**
   * Queues the key and resolves once a reconcile of it that started after this call has
   * succeeded (done, after, or a terminal failure: nothing left to retry). Stays pending
   * across failed attempts. Rejects with StoppedError if the controller stops first.
   * `hint` is what a wake-up about the key's own object says (with no trace in it, the caller's
   * active span, if any, is the trace its reconcile continues): for a key parked after a
   * terminal failure, a wake-up about the version it failed on (or an older one) resolves at
   * once without a reconcile; anything else (a newer version, no hint: a related object
   * changed) runs it again.
   */
  enqueue(key: string, hint?: WakeHint): Promise<void>;
  /** Queues the key without waiting for anything (also a key parked after a terminal failure). */
  add(key: string): void;
  /** Why the key is parked after a terminal failure, or undefined when it is not. */
  terminalFailure(key: string): TerminalFailure | undefined;
  /** Lists and queues every key now; returns how many. */
  resync(): Promise<number>;
  snapshot(): ControllerSnapshot;
}

export class StoppedError extends Error {
  override readonly name = "StoppedError";
  constructor(controller: string) {
    super(`controller ${controller} stopped`);
  }
}

export class ReconcileTimeoutError extends Error {
  override readonly name = "ReconcileTimeoutError";
  constructor(ms: number) {
    super(`reconcile exceeded its ${ms} ms timeout`);
  }
}

export const CONTROLLER_DEFAULTS = {
  concurrency: 4,
  resyncMs: 0,
  timeoutMs: 60_000,
  abortGraceMs: 5000,
  timerPollMs: 250,
  stopTimeoutMs: 30_000,
  warnAfterFailures: 3,
  terminalAfterRepeats: 5,
  busyRetryMs: 50,
} as const;

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
  /** WakeHint.since, until the lag is observed. */
  since?: number;
  /** WakeHint.trace. */
  trace?: string;
}

interface KeyState {
  failures: number;
  /** Enqueue promises not yet claimed by a run. */
  waiters: Waiter[];
  retry?: NodeJS.Timeout;
  retryAt?: number;
  /** The run of identical bad-data failures the key is on. */
  streak?: FailureStreak;
  /** Set while the key is parked after a terminal failure. */
  terminal?: TerminalFailure;
  /** Attempts in a row that found the key locked by another replica. */
  busy?: number;
}

interface Run {
  ac: AbortController;
  /** The waiters this run settles (enqueued before it started). */
  claimed: Waiter[];
  done: Promise<void>;
  /** The newest version of the key's object the reconcile reported (`ctx.observed`). */
  observed?: string;
  /** The distinct trace contexts of the claimed waiters. */
  traces: string[];
}

type Outcome = { kind: "done" } | { kind: "after"; ms: number } | { kind: "failed"; reason: ErrorReason; err: unknown; repeats?: number } | { kind: "busy" };

export function createController(o: ControllerOptions): Controller {
  return new ControllerImpl(o);
}

class ControllerImpl implements Controller {
  readonly name: string;
  private readonly reconciler: Reconciler<string>;
  private readonly log: Logger;
  private readonly cfg: Required<Omit<ControllerOptions, "reconciler" | "sql" | "log" | "listKeys" | "backoff" | "timerScope" | "keyLocks">> & { backoff: BackoffOptions };
  private readonly timers: DurableTimers;
  private readonly queue = new WorkQueue();
  private readonly keys = new Map<string, KeyState>();
  private readonly running = new Map<string, Run>();
  private readonly metrics = new ControllerMetrics();
  private state: "new" | "running" | "stopping" | "stopped" = "new";
  private stopping?: Promise<void>;
  private resyncTimer?: NodeJS.Timeout;
  private resyncing?: Promise<number>;
  private poller?: Promise<void>;
  private pollerWake?: () => void;
  /** Resolves when stop() is called: a timer poll in flight is not waited for (its claims come back with their lease). */
  private readonly stopCalled: Promise<void>;
  private signalStop!: () => void;
  private idle?: () => void;

  constructor(private readonly o: ControllerOptions) {
    this.stopCalled = new Promise<void>((resolve) => (this.signalStop = resolve));
    this.reconciler = o.reconciler;
    this.name = o.reconciler.name;
    this.log = o.log.child({ controller: this.name });
    const timeoutMs = o.timeoutMs ?? CONTROLLER_DEFAULTS.timeoutMs;
    this.cfg = {
      concurrency: Math.max(1, o.concurrency ?? CONTROLLER_DEFAULTS.concurrency),
      resyncMs: o.resyncMs ?? CONTROLLER_DEFAULTS.resyncMs,
      timeoutMs,
      abortGraceMs: o.abortGraceMs ?? CONTROLLER_DEFAULTS.abortGraceMs,
      timerPollMs: o.timerPollMs ?? CONTROLLER_DEFAULTS.timerPollMs,
      timerLeaseMs: o.timerLeaseMs ?? Math.max(2 * timeoutMs, 60_000),
      stopTimeoutMs: o.stopTimeoutMs ?? CONTROLLER_DEFAULTS.stopTimeoutMs,
      warnAfterFailures: o.warnAfterFailures ?? CONTROLLER_DEFAULTS.warnAfterFailures,
      terminalAfterRepeats: o.terminalAfterRepeats ?? CONTROLLER_DEFAULTS.terminalAfterRepeats,
      busyRetryMs: o.busyRetryMs ?? CONTROLLER_DEFAULTS.busyRetryMs,
      backoff: { ...DEFAULT_BACKOFF, ...o.backoff },
    };
    this.timers = new DurableTimers(o.sql, o.timerScope ? `${this.name}@${o.timerScope}` : this.name, this.cfg.timerLeaseMs);
  }

  start(): void {
    if (this.state !== "new") return;
    this.state = "running";
    this.poller = this.pollTimers();
    if (this.cfg.resyncMs > 0 && this.o.listKeys) {
      this.resyncTimer = setInterval(() => void this.resync().catch(() => {}), this.cfg.resyncMs);
    }
    this.log.info({ concurrency: this.cfg.concurrency, resyncMs: this.cfg.resyncMs }, "controller started");
    this.pump();
  }

  add(key: string, lane: Lane = "change"): void {
    if (this.state === "stopping" || this.state === "stopped") return;
    if (this.queue.add(key, lane)) this.pump();
  }

  enqueue(key: string, hint?: WakeHint): Promise<void> {
    if (this.state === "stopping" || this.state === "stopped") return Promise.reject(new StoppedError(this.name));
    const parked = this.keys.get(key)?.terminal;
    if (parked && hint && coveredByFailure(parked.version, hint.resourceVersion)) {
      this.metrics.terminalSkips++;
      return Promise.resolve();
    }
    // a reconcile caused by a traced change belongs to its trace, whoever queues the key
    const traceparent = hint?.trace ?? traceContextOf();
    return new Promise<void>((resolve, reject) => {
      this.keyState(key).waiters.push({ resolve, reject, since: hint?.since, trace: traceparent });
      this.add(key);
    });
  }

  resync(): Promise<number> {
    const list = this.o.listKeys;
    if (!list) return Promise.resolve(0);
    if (this.resyncing) return this.resyncing;
    this.resyncing = (async () => {
      try {
        const keys = await list();
        let parked = 0;
        for (const e of keys) {
          const { key, resourceVersion } = typeof e === "string" ? { key: e, resourceVersion: undefined } : e;
          const t = this.keys.get(key)?.terminal;
          // a parked key waits for a newer version of its object, not for the clock
          if (t && (resourceVersion === undefined || coveredByFailure(t.version, resourceVersion))) {
            parked++;
            continue;
          }
          // not news: after the changes waiting and beside them (see WorkQueue)
          this.add(key, "bulk");
        }
        this.metrics.resyncs++;
        this.log.debug({ keys: keys.length, parked }, "resync");
        return keys.length;
      } catch (e) {
        this.log.warn({ err: e }, "resync failed");
        throw e;
      } finally {
        this.resyncing = undefined;
      }
    })();
    return this.resyncing;
  }

  snapshot(): ControllerSnapshot {
    let backoffKeys = 0;
    let terminalKeys = 0;
    for (const st of this.keys.values()) {
      if (st.retry) backoffKeys++;
      if (st.terminal) terminalKeys++;
    }
    return { name: this.name, queueDepth: this.queue.length, inFlight: this.running.size, backoffKeys, terminalKeys, metrics: this.metrics };
  }

  terminalFailure(key: string): TerminalFailure | undefined {
    const t = this.keys.get(key)?.terminal;
    return t && { ...t };
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    const wasRunning = this.state === "running";
    this.state = "stopping";
    clearInterval(this.resyncTimer);
    this.signalStop();
    this.pollerWake?.();
    for (const st of this.keys.values()) {
      clearTimeout(st.retry);
      st.retry = undefined;
    }
    this.queue.clear();
    await this.poller;
    if (!(await this.waitIdle(this.cfg.stopTimeoutMs))) {
      this.log.warn({ running: [...this.running.keys()] }, "reconciles still running at stop; aborting them");
      for (const r of this.running.values()) r.ac.abort(new StoppedError(this.name));
      await this.waitIdle(this.cfg.abortGraceMs);
    }
    const err = new StoppedError(this.name);
    for (const r of this.running.values()) for (const w of r.claimed.splice(0)) w.reject(err);
    for (const st of this.keys.values()) for (const w of st.waiters.splice(0)) w.reject(err);
    this.keys.clear();
    this.state = "stopped";
    if (wasRunning) this.log.info({}, "controller stopped");
  }

  private waitIdle(ms: number): Promise<boolean> {
    if (this.running.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.idle = undefined;
        resolve(false);
      }, ms);
      this.idle = () => {
        clearTimeout(t);
        this.idle = undefined;
        resolve(true);
      };
    });
  }

  private keyState(key: string): KeyState {
    let st = this.keys.get(key);
    if (!st) {
      st = { failures: 0, waiters: [] };
      this.keys.set(key, st);
    }
    return st;
  }

  private pump(): void {
    while (this.state === "running" && this.running.size < this.cfg.concurrency) {
      const key = this.queue.get();
      if (key === undefined) return;
      this.startRun(key);
    }
  }

  private startRun(key: string): void {
    const st = this.keyState(key);
    const claimed = st.waiters;
    st.waiters = [];
    // the wake-up lag is measured once per wake-up, at the first reconcile it is waiting for
    const now = Date.now();
    for (const w of claimed) {
      if (w.since === undefined) continue;
      this.metrics.observeWakeUpLag(now - w.since);
      w.since = undefined;
    }
    const reconcileId = randomUUID();
    const log = this.log.child({ key, reconcileId });
    const run: Run = { ac: new AbortController(), claimed, done: Promise.resolve(), traces: [...new Set(claimed.flatMap((w) => (w.trace ? [w.trace] : [])))] };
    this.running.set(key, run);
    run.done = this.execute(key, st, run, log, reconcileId).catch((e) => this.log.error({ err: e, key }, "controller runner failed"));
  }

  private async execute(key: string, st: KeyState, run: Run, log: Logger, reconcileId: string): Promise<void> {
    const t0 = performance.now();
    const locks = this.o.keyLocks;
    if (locks) {
      let locked: boolean;
      try {
        locked = await locks.tryLock(this.name, key);
      } catch (e) {
        this.finish(key, run, { kind: "failed", reason: "error", err: e }, performance.now() - t0, log);
        return;
      }
      if (!locked) {
        this.finish(key, run, { kind: "busy" }, performance.now() - t0, log);
        return;
      }
      // the reconcile's duration (and the line it logs) counts from the moment the lock is held to before it is given back
      const t1 = performance.now();
      try {
        this.finish(key, run, await this.reconcileOnce(key, st, run, log, reconcileId), performance.now() - t1, log);
      } finally {
        // (a run of the key that finish() started meanwhile holds it once more: the session's lock is counted)
        void locks.unlock(this.name, key).catch((e) => log.warn({ err: e }, "key lock not given back; it goes with its connection"));
      }
      return;
    }
    const outcome = await this.reconcileOnce(key, st, run, log, reconcileId);
    this.finish(key, run, outcome, performance.now() - t0, log);
  }

  /** A reconcile and its timer (with the key's lock held, when there are key locks). */
  private async reconcileOnce(key: string, st: KeyState, run: Run, log: Logger, reconcileId: string): Promise<Outcome> {
    let outcome: Outcome;
    try {
      // a child of the first change that woke it (the others are links): its writes carry the trace on
      const [first, ...others] = run.traces;
      const links = others.map((t) => ({ context: trace.getSpanContext(contextFrom(t))! })).filter((l) => l.context);
      const result = await inSpan(`reconcile ${this.name}`, { parent: contextFrom(first), links, attributes: { "flotilla.controller": this.name, "flotilla.key": key, "flotilla.reconcile_id": reconcileId } }, () =>
        this.invoke(key, run, log, reconcileId),
      );
      if (result.kind === "after" || result.kind === "retry") {
        const ms = result.kind === "after" ? (await this.timers.set(key, result.ms), result.ms) : await this.timers.retry(key, result.baseMs, result.maxMs);
        if (ms < this.cfg.timerPollMs) this.pollerWake?.();
        outcome = { kind: "after", ms };
      } else {
        await this.timers.clear(key);
        outcome = { kind: "done" };
      }
    } catch (e) {
      const timedOut = e instanceof ReconcileTimeoutError;
      const cls = timedOut ? "transient" : classifyFailure(e);
      const next = nextStreak(st.streak, { cls, signature: failureSignature(e), version: run.observed }, this.cfg.terminalAfterRepeats);
      st.streak = next.streak;
      if (next.terminal) {
        await this.timers.clear(key).catch(() => {});
        outcome = { kind: "failed", reason: "terminal", err: e, repeats: next.streak?.repeats };
      } else {
        outcome = { kind: "failed", reason: timedOut ? "timeout" : "error", err: e };
      }
    }
    return outcome;
  }

  /** Calls the reconciler; a synchronous throw, an invalid result or a timeout are failures. */
  private invoke(key: string, run: Run, log: Logger, reconcileId: string): Promise<Result> {
    const ac = run.ac;
    const observed = (rv: string | undefined) => {
      if (typeof rv === "string" && rv !== "") run.observed = newerVersion(run.observed, rv);
    };
    let p: Promise<Result>;
    try {
      p = Promise.resolve(this.reconciler.reconcile(key, { log, reconcileId, signal: ac.signal, observed }));
    } catch (e) {
      return Promise.reject(e);
    }
    const checked = p.then((r) => {
      if (!r || (r.kind !== "done" && !(r.kind === "after" && typeof r.ms === "number") && !(r.kind === "retry" && r.baseMs > 0 && r.maxMs > 0))) {
        throw new Error(`reconcile returned an invalid result: ${JSON.stringify(r)}`);
      }
      return r.kind === "after" && !(r.ms > 0) ? ({ kind: "done" } as Result) : r;
    });
    const timeoutMs = this.cfg.timeoutMs;
    if (!(timeoutMs > 0)) return checked;
    return new Promise<Result>((resolve, reject) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        const err = new ReconcileTimeoutError(timeoutMs);
        ac.abort(err);
        // Keep the key (one reconcile at a time) until the aborted run settles, within a grace.
        const grace = setTimeout(() => {
          log.error({ graceMs: this.cfg.abortGraceMs }, "reconcile ignored its abort signal; releasing the key");
          reject(err);
        }, this.cfg.abortGraceMs);
        checked.then(
          () => (clearTimeout(grace), reject(err)),
          () => (clearTimeout(grace), reject(err)),
        );
      }, timeoutMs);
      checked.then(
        (r) => {
          if (timedOut) return;
          clearTimeout(timer);
          resolve(r);
        },
        (e) => {
          if (timedOut) return;
          clearTimeout(timer);
          reject(e);
        },
      );
    });
  }

  private finish(key: string, run: Run, outcome: Outcome, ms: number, log: Logger): void {
    this.running.delete(key);
    const st = this.keyState(key);
    if (outcome.kind === "busy") {
      // another replica reconciles it: again once it is done, for the same waiters
      this.metrics.keyBusy++;
      st.busy = (st.busy ?? 0) + 1;
      st.waiters = run.claimed.concat(st.waiters);
      if (this.state === "running") this.retryAfter(key, st, Math.min(1000, this.cfg.busyRetryMs * 2 ** Math.min(st.busy - 1, 5)));
    } else if (outcome.kind === "failed" && outcome.reason !== "terminal") {
      st.busy = undefined;
      st.terminal = undefined;
      st.failures++;
      this.metrics.observe("error", ms, outcome.reason);
      st.waiters = run.claimed.concat(st.waiters);
      if (this.state === "running") {
        const delay = backoffDelay(st.failures, this.cfg.backoff);
        this.retryAfter(key, st, delay);
        const fields = { err: outcome.err, failures: st.failures, retryInMs: delay, durationMs: Math.round(ms) };
        if (st.failures >= this.cfg.warnAfterFailures) log.warn(fields, "reconcile failed; retrying");
        else log.debug(fields, "reconcile failed; retrying");
      }
    } else {
      st.busy = undefined;
      st.failures = 0;
      clearTimeout(st.retry);
      st.retry = undefined;
      for (const w of run.claimed) w.resolve();
      if (outcome.kind === "failed") {
        st.terminal = { version: run.observed, error: failureSignature(outcome.err), repeats: outcome.repeats ?? 1, at: Date.now() };
        this.metrics.observe("error", ms, "terminal");
        log.error(
          { err: outcome.err, resourceVersion: run.observed, repeats: st.terminal.repeats, durationMs: Math.round(ms) },
          "reconcile failed terminally; retried only when its object changes",
        );
      } else {
        st.terminal = undefined;
        st.streak = undefined;
        this.metrics.observe(outcome.kind, ms);
        log.debug({ result: outcome.kind, afterMs: outcome.kind === "after" ? outcome.ms : undefined, durationMs: Math.round(ms) }, "reconciled");
      }
    }
    this.queue.done(key);
    if (st.failures === 0 && st.waiters.length === 0 && !st.retry && !st.terminal && !this.running.has(key)) this.keys.delete(key);
    if (this.running.size === 0) this.idle?.();
    this.pump();
  }

  /** Re-queues the key after `delay` unless an earlier retry is already set. */
  private retryAfter(key: string, st: KeyState, delay: number): void {
    const at = Date.now() + delay;
    if (st.retry && st.retryAt! <= at) return;
    clearTimeout(st.retry);
    st.retryAt = at;
    st.retry = setTimeout(() => {
      st.retry = undefined;
      this.add(key);
    }, delay);
  }

  private async pollTimers(): Promise<void> {
    let failures = 0;
    const pollMs = this.cfg.timerPollMs;
    while (this.state === "running") {
      // at the same instants as every other poller of the process: their claims share a statement (DurableTimers)
      const aligned = () => pollMs - (Date.now() % pollMs);
      let wait = pollMs;
      try {
        // Bounded: after Postgres drops connections a postgres.js query can wait out its connect timeout.
        const polled = await Promise.race([withTimeout(this.timers.claimDue(1000), Math.max(5000, 20 * pollMs), "timer poll"), this.stopCalled]);
        if (!polled || this.state !== "running") break; // claimed but not run: the lease brings them back
        const { keys, nextMs } = polled;
        for (const k of keys) {
          // a parked key's timer (another replica's, say) is dropped: the key waits for a change
          if (this.keys.get(k)?.terminal) void this.timers.clear(k).catch(() => {});
          else this.add(k);
        }
        this.metrics.timersFired += keys.length;
        if (keys.length > 0) this.log.debug({ keys: keys.length }, "timers fired");
        if (failures > 0) this.log.info({ failures }, "timer poller recovered");
        failures = 0;
        wait = keys.length >= 1000 ? 0 : Math.max(0, Math.min(aligned(), nextMs === null ? pollMs : Math.ceil(nextMs)));
      } catch (e) {
        failures++;
        wait = backoffDelay(failures, { baseMs: pollMs, maxMs: 10_000 });
        this.log.warn({ err: e, failures, retryInMs: wait }, "timer poll failed");
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          this.pollerWake = undefined;
          resolve();
        }, wait);
        this.pollerWake = () => {
          clearTimeout(t);
          this.pollerWake = undefined;
          resolve();
        };
      });
    }
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise<never>((_, reject) => {
      t = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]);
}
