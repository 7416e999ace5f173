import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  type ConsumerConfig,
  type ConsumerInfo,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import type { WakeUp } from "@flotilla/api";
import { silentLog, retryDelay, sleep, type Log } from "./log.js";

/**
 * Handles one wake-up. A message carries one or many (see the relay); it is acked when the
 * handlers of all of them resolve, nak'ed (with delay) when one rejects.
 */
export type WakeUpHandler = (w: WakeUp, msg: JsMsg) => Promise<void>;

/** The wake-ups of a message: `{"wakeUps": [...]}`, or one wake-up as older relays sent it. */
export function wakeUpsOf(payload: unknown): WakeUp[] {
  if (!payload || typeof payload !== "object") throw new Error("not an object");
  const list = (payload as { wakeUps?: unknown }).wakeUps;
  if (list === undefined) return [payload as WakeUp];
  if (!Array.isArray(list) || list.some((w) => !w || typeof w !== "object")) throw new Error("wakeUps is not a list of objects");
  return list as WakeUp[];
}

export interface ConsumeOptions {
  js: JetStreamClient;
  stream: string;
  /**
   * Durable name of the service (replicas of one service pass the same one and share the
   * consumer). With `subject` it is the consumer's name; with `subjects` each subject gets
   * its own consumer named `consumerNameFor(durable, subject)` (server 2.9 allows one filter
   * subject per consumer).
   */
  durable: string;
  subject?: string;
  subjects?: string[];
  handler: WakeUpHandler;
  /** Handlers running at once, across all subjects of this call (default 64). */
  concurrency?: number;
  /** The server redelivers a message not acked within this (default 30 s); running handlers keep extending it. */
  ackWaitMs?: number;
  /** Unacked messages the server allows per consumer (default 1000). */
  maxAckPending?: number;
  /** Redelivery delay after a handler failure, growing with the delivery count (default 1 s .. 60 s). */
  nakDelay?: { baseMs: number; maxMs: number };
  /** A handler still running after this is given up: the message is nak'ed (default 5 min). */
  handlerTimeoutMs?: number;
  /** How long one pull request waits on the server for messages (default 1 s, at least 1 s); a stop waits for the open one to end. */
  pullExpiresMs?: number;
  /**
   * A consumer of one replica rather than one shared by the replicas: it starts with the
   * messages that arrive after it is created (not the whole stream), and the server deletes it
   * once no replica has pulled from it for `inactiveThresholdMs` (a replica that went away).
   */
  ownConsumer?: { inactiveThresholdMs: number };
  log?: Log;
}

export const CONSUMER_DEFAULTS = {
  concurrency: 64,
  ackWaitMs: 30_000,
  maxAckPending: 1000,
  nakDelay: { baseMs: 1000, maxMs: 60_000 },
  handlerTimeoutMs: 5 * 60_000,
  pullExpiresMs: 1000,
} as const;

export interface ConsumerStats {
  /** Messages received. */
  received: number;
  /** Wake-ups in them. */
  wakeUps: number;
  acked: number;
  naked: number;
  /** Malformed messages terminated (never redelivered). */
  dropped: number;
  inFlight: number;
}

export interface WakeUpConsumer {
  /** Resolves once every consumer exists on the server and pulling has started. */
  readonly ready: Promise<void>;
  readonly stats: Readonly<ConsumerStats>;
  /**
   * Stops pulling, waits (up to timeoutMs, default 10 s) for running handlers, then naks
   * whatever is still running so another replica gets it at once.
   */
  stop(opts?: { timeoutMs?: number }): Promise<void>;
}

/**
 * Why pulling is done as a loop of fetches and not with `consume()`: a pull request lives on the
 * server until it is filled or expires, and a client that unsubscribes from it (as closing a
 * `consume()` iterator does) drops whatever the server had already sent to it. Those messages
 * then wait out ack_wait (30 s) before anyone else gets them; seen as 16 of 2,000 wake-ups held
 * back after a restart. A fetch ends on the server's word (filled, or its 408 at expiry), so a
 * stopping consumer issues no new fetch, takes in what the open one still brings, and hands that
 * back with a nak delayed past the open request's end (a nak without delay would go straight back
 * to that request). Nothing is dropped, and a stop waits at most one pull's expiry.
 */
export const HAND_BACK_MARGIN_MS = 200;

/** The settings of a wake-up consumer `consume` asks for. */
export type WantedConsumer = Required<Pick<ConsumerConfig, "durable_name" | "ack_policy" | "ack_wait" | "max_deliver" | "deliver_policy" | "filter_subject" | "max_ack_pending">> &
  Pick<ConsumerConfig, "inactive_threshold">;

/** Settings the server changes in place, keeping the consumer's position. */
const UPDATABLE = ["ack_wait", "max_deliver", "max_ack_pending"] as const;

/**
 * What attaching to an existing durable consumer takes: nothing (`{}`), an in-place update of
 * the settings that differ, or a conflict that no update can resolve (another filter subject or
 * ack policy: the name is taken by a consumer of something else). The deliver policy only
 * placed a new consumer; an existing one keeps its position whatever it says.
 */
export function consumerChanges(have: Partial<ConsumerConfig>, want: WantedConsumer): { update?: Partial<ConsumerConfig>; conflict?: string } {
  if ((have.filter_subject ?? "") !== want.filter_subject) {
    return { conflict: `consumer ${want.durable_name} exists with filter subject "${have.filter_subject ?? ""}", not "${want.filter_subject}"` };
  }
  if (have.ack_policy !== undefined && have.ack_policy !== want.ack_policy) {
    return { conflict: `consumer ${want.durable_name} exists with ack policy ${have.ack_policy}, not ${want.ack_policy}` };
  }
  const update: Partial<ConsumerConfig> = {};
  for (const k of UPDATABLE) if (have[k] !== want[k]) Object.assign(update, { [k]: want[k] });
  return Object.keys(update).length > 0 ? { update } : {};
}

/**
 * Attaches to the durable consumer `want.durable_name`, creating it only when it does not exist
 * and updating only the settings that changed. A restart therefore never re-creates a consumer
 * (which would start it again from the beginning of the stream) and sends no create request
 * for an existing one (servers from 2.10 refuse a create whose settings differ from the
 * consumer's, so a changed setting would keep the service from ever attaching). Two replicas
 * creating it at once is fine: the loser's create fails, and its retry attaches.
 */
export async function ensureConsumer(jsm: JetStreamManager, stream: string, want: WantedConsumer): Promise<"created" | "updated" | "attached"> {
  let have: ConsumerInfo | undefined;
  try {
    have = await jsm.consumers.info(stream, want.durable_name);
  } catch (e) {
    if ((e as { code?: unknown })?.code !== JetStreamApiCodes.ConsumerNotFound) throw e;
  }
  if (!have) {
    await jsm.consumers.add(stream, want);
    return "created";
  }
  const { update, conflict } = consumerChanges(have.config, want);
  if (conflict) throw new Error(`${conflict}; delete it (it will start again from the beginning of the stream) or choose another durable name`);
  if (!update) return "attached";
  await jsm.consumers.update(stream, want.durable_name, update);
  return "updated";
}

/** The consumer name used for one subject when `subjects` is given. */
export function consumerNameFor(durable: string, subject: string): string {
  return `${durable}-${subject.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

class Slots {
  private free: number;
  private readonly waiting: ((ok: boolean) => void)[] = [];
  private closed = false;
  constructor(n: number) {
    this.free = n;
  }
  acquire(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(true);
    }
    return new Promise((r) => this.waiting.push(r));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next(true);
    else this.free++;
  }
  close(): void {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w(false);
  }
}

/**
 * Runs a durable pull consumer (one per subject) and feeds its wake-ups to `handler`, at
 * most `concurrency` at a time. Explicit acks, unlimited redeliveries, and a new consumer
 * starts from the beginning of the stream. Reconnects and recreates consumers on its own.
 */
export function consume(o: ConsumeOptions): WakeUpConsumer {
  const log = o.log ?? silentLog;
  const subjects = o.subject !== undefined ? [o.subject] : (o.subjects ?? []);
  if (subjects.length === 0) throw new Error("consume: give subject or subjects");
  if (o.subject !== undefined && o.subjects !== undefined) throw new Error("consume: give subject or subjects, not both");
  const names = o.subject !== undefined ? [o.durable] : subjects.map((s) => consumerNameFor(o.durable, s));
  const concurrency = Math.max(1, o.concurrency ?? CONSUMER_DEFAULTS.concurrency);
  const ackWaitMs = o.ackWaitMs ?? CONSUMER_DEFAULTS.ackWaitMs;
  const nakDelay = o.nakDelay ?? CONSUMER_DEFAULTS.nakDelay;
  const handlerTimeoutMs = o.handlerTimeoutMs ?? CONSUMER_DEFAULTS.handlerTimeoutMs;
  const pullExpiresMs = Math.max(1000, o.pullExpiresMs ?? CONSUMER_DEFAULTS.pullExpiresMs);
  const stats: ConsumerStats = { received: 0, wakeUps: 0, acked: 0, naked: 0, dropped: 0, inFlight: 0 };
  const slots = new Slots(concurrency);
  const stopper = new AbortController();
  const iterators = new Set<ConsumerMessages>();
  interface Entry {
    /** Acked, nak'ed or terminated already. */
    settled: boolean;
    started: number;
    touched: number;
    /** Rejects when the sweeper gives up on the handler. */
    timedOut: Promise<never>;
    giveUp: (e: Error) => void;
    done: Promise<void>;
  }
  const running = new Map<JsMsg, Entry>();

  let readyCount = 0;
  let markReady!: () => void;
  const ready = new Promise<void>((r) => (markReady = r));

  function nakDelayFor(m: JsMsg): number {
    return retryDelay(Math.max(1, m.info.deliveryCount), nakDelay.baseMs, nakDelay.maxMs);
  }

  /**
   * One sweep for all running handlers instead of timers per message: tells the server a
   * long handler is still working (so ack_wait does not redeliver it), and gives up on
   * handlers past handlerTimeoutMs.
   */
  // Touched at least every ackWait/3 + ackWait/6 = ackWait/2.
  const touchEveryMs = Math.max(100, Math.floor(ackWaitMs / 3));
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [m, entry] of running) {
      if (entry.settled) continue;
      if (now - entry.started >= handlerTimeoutMs) entry.giveUp(new Error(`wake-up handler still running after ${handlerTimeoutMs} ms`));
      else if (now - entry.touched >= touchEveryMs) {
        entry.touched = now;
        m.working();
      }
    }
  }, Math.max(50, Math.min(Math.floor(touchEveryMs / 2), 1000)));
  sweeper.unref();

  async function handle(m: JsMsg, entry: Entry): Promise<void> {
    stats.received++;
    let list: WakeUp[];
    try {
      list = wakeUpsOf(m.json<unknown>());
    } catch (e) {
      entry.settled = true;
      stats.dropped++;
      log.warn({ err: e, subject: m.subject, seq: m.seq }, "malformed wake-up dropped");
      m.term(); // no reason: "+TERM <reason>" is not understood before server 2.10.4, and the message would come back
      return;
    }
    stats.wakeUps += list.length;
    try {
      await Promise.race([list.length === 1 ? o.handler(list[0]!, m) : Promise.all(list.map((w) => o.handler(w, m))), entry.timedOut]);
      if (!entry.settled) {
        entry.settled = true;
        m.ack();
        stats.acked++;
      }
    } catch (e) {
      if (!entry.settled) {
        entry.settled = true;
        const delay = nakDelayFor(m);
        m.nak(delay);
        stats.naked++;
        const fields = { err: e, subject: m.subject, wakeUps: list.length, first: list[0]?.id, deliveryCount: m.info.deliveryCount, retryInMs: delay };
        if (m.info.deliveryCount >= 3) log.warn(fields, "wake-up handler failed; redelivering");
        else log.debug(fields, "wake-up handler failed; redelivering");
      }
    }
  }

  async function run(subject: string, name: string): Promise<void> {
    let failures = 0;
    let counted = false;
    while (!stopper.signal.aborted) {
      let msgs: ConsumerMessages | undefined;
      try {
        const jsm = await o.js.jetstreamManager();
        const how = await ensureConsumer(jsm, o.stream, {
          durable_name: name,
          ack_policy: AckPolicy.Explicit,
          ack_wait: nanos(ackWaitMs),
          max_deliver: -1,
          deliver_policy: o.ownConsumer ? DeliverPolicy.New : DeliverPolicy.All,
          filter_subject: subject,
          max_ack_pending: o.maxAckPending ?? CONSUMER_DEFAULTS.maxAckPending,
          ...(o.ownConsumer ? { inactive_threshold: nanos(o.ownConsumer.inactiveThresholdMs) } : {}),
        });
        if (how !== "attached") log.info({ consumer: name, subject }, how === "created" ? "wake-up consumer created" : "wake-up consumer settings updated");
        const c = await o.js.consumers.get(o.stream, name);
        while (!stopper.signal.aborted) {
          const expiresAt = Date.now() + pullExpiresMs;
          msgs = await c.fetch({ max_messages: concurrency, expires: pullExpiresMs });
          iterators.add(msgs);
          if (!counted) {
            counted = true;
            if (++readyCount === subjects.length) markReady();
          }
          for await (const m of msgs) {
            if (stopper.signal.aborted || !(await slots.acquire())) {
              // stopping: hand back what the open pull request still brings, after that request's end
              m.nak(Math.max(0, expiresAt - Date.now()) + HAND_BACK_MARGIN_MS);
              stats.naked++;
              continue;
            }
            const now = Date.now();
            let giveUp!: (e: Error) => void;
            const timedOut = new Promise<never>((_, reject) => (giveUp = reject));
            timedOut.catch(() => {});
            const entry: Entry = { settled: false, started: now, touched: now, timedOut, giveUp, done: Promise.resolve() };
            stats.inFlight++;
            running.set(m, entry);
            entry.done = handle(m, entry).catch((e) => log.error({ err: e }, "wake-up handling crashed")).finally(() => {
              stats.inFlight--;
              running.delete(m);
              slots.release();
            });
          }
          iterators.delete(msgs);
          msgs = undefined;
          if (failures > 0) {
            log.info({ consumer: name }, "wake-up consumer recovered");
            failures = 0;
          }
        }
        return;
      } catch (e) {
        if (stopper.signal.aborted) return;
        if ((e as Error)?.name === "ClosedConnectionError") {
          log.error({ err: e, consumer: name }, "NATS connection closed; wake-up consumer ends");
          return;
        }
        failures++;
        const ms = retryDelay(failures, 250, 10_000);
        log.warn({ err: e, consumer: name, failures, retryInMs: ms }, "wake-up consumer failed; restarting");
        await sleep(ms, stopper.signal);
      } finally {
        if (msgs) {
          iterators.delete(msgs);
          await msgs.close().catch(() => {});
        }
      }
    }
  }

  const loops = subjects.map((s, i) => run(s, names[i]).catch((e) => log.error({ err: e }, "wake-up consumer crashed")));
  let stopping: Promise<void> | undefined;

  return {
    ready,
    stats,
    stop(opts = {}) {
      stopping ??= (async () => {
        stopper.abort();
        slots.close();
        // each loop ends with its open pull request (at most pullExpiresMs; a server that went
        // quiet is noticed by the missed heartbeats); past that, close what is left
        await Promise.race([Promise.all(loops), sleep(pullExpiresMs + 5000)]);
        for (const it of iterators) await it.close().catch(() => {});
        await Promise.all(loops);
        const deadline = sleep(opts.timeoutMs ?? 10_000);
        await Promise.race([Promise.all([...running.values()].map((r) => r.done)), deadline]);
        clearInterval(sweeper);
        for (const [m, entry] of running) {
          if (entry.settled) continue;
          entry.settled = true;
          m.nak(HAND_BACK_MARGIN_MS);
          stats.naked++;
        }
      })();
      return stopping;
    },
  };
}
