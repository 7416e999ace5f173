import { objectKeyOf, type WakeUp } from "@flotilla/api";
import { CONSUMER_DEFAULTS, consume, type ConsumeOptions, type JsMsg, type WakeUpConsumer, type WakeUpHandler } from "@flotilla/events";
import { newerVersion } from "./classify.js";
import type { Controller, KeyVersion } from "./controller.js";

/**
 * Maps a wake-up to the controller keys it concerns (one event can fan out to many keys). A
 * key whose own object the wake-up is about may carry its resourceVersion (`{ key,
 * resourceVersion }`): a key parked after a terminal failure on that version is then not run
 * again. A plain key means "something related changed" and always runs.
 */
export type KeyMapper = (w: WakeUp) => Array<string | KeyVersion> | Promise<Array<string | KeyVersion>>;

/** "namespace/name", or "name" for a cluster-scoped object: the usual key of a wake-up's own object. */
export function objectKey(w: Pick<WakeUp, "namespace" | "name">): string {
  return objectKeyOf(w);
}

/** Maps a wake-up to its own object's key, with the object's version. */
export const byObjectKey: KeyMapper = (w) => [{ key: objectKey(w), resourceVersion: w.resourceVersion }];

/**
 * One enqueue per distinct key: the version hint is kept only when every mention of the key
 * carries one (the newest); a plain mention wins, since a related change must run the key.
 */
export function distinctKeys(keys: ReadonlyArray<string | KeyVersion>): KeyVersion[] {
  const out = new Map<string, KeyVersion>();
  for (const k of keys) {
    const kv: KeyVersion = typeof k === "string" ? { key: k } : k;
    const prev = out.get(kv.key);
    if (!prev) out.set(kv.key, { key: kv.key, resourceVersion: kv.resourceVersion });
    else if (prev.resourceVersion === undefined || kv.resourceVersion === undefined) prev.resourceVersion = undefined;
    else prev.resourceVersion = newerVersion(prev.resourceVersion, kv.resourceVersion);
  }
  return [...out.values()];
}

/**
 * A wake-up handler that enqueues every mapped key and resolves once a reconcile of each,
 * started after the wake-up arrived, has succeeded; the consumer acks the message only
 * then, so a crash before that redelivers it.
 */
export function wakeUpHandler(controller: Pick<Controller, "enqueue">, map: KeyMapper): WakeUpHandler {
  return async (w, msg) => {
    const keys = await map(w);
    if (keys.length === 0) return;
    // the stream's timestamp of the message: when the relay stored the change's wake-up
    const since = storedAt(msg);
    const trace = w.traceContext;
    await Promise.all(distinctKeys(keys).map((k) => controller.enqueue(k.key, k.resourceVersion === undefined ? { since, trace } : { resourceVersion: k.resourceVersion, since, trace })));
  };
}

/** When the stream stored the message (ms since the epoch), or undefined when it does not say. */
export function storedAt(msg: Pick<JsMsg, "info"> | undefined): number | undefined {
  let ns: unknown;
  try {
    ns = msg?.info?.timestampNanos;
  } catch {
    return undefined; // not a JetStream message (no reply subject to parse)
  }
  if (typeof ns === "bigint") return ns > 0n ? Number(ns / 1_000_000n) : undefined;
  return typeof ns === "number" && ns > 0 ? Math.floor(ns / 1e6) : undefined;
}

export interface WireOptions extends Omit<ConsumeOptions, "handler"> {
  controller: Controller;
  map: KeyMapper;
}

/**
 * Runs a durable consumer that feeds a controller (see `consume` for the options).
 *
 * A handler here only enqueues and waits; the controller bounds the real work. So the
 * handler concurrency defaults to the consumer's max_ack_pending (1000): a few keys that
 * keep failing (their wake-ups wait, unacked, for a success) must not stop the consumer
 * from delivering everything else. A wake-up still waiting after `handlerTimeoutMs`
 * (default 5 min) is nak'ed and comes back later.
 */
export function wireWakeUps(o: WireOptions): WakeUpConsumer {
  const { controller, map, ...rest } = o;
  const maxAckPending = rest.maxAckPending ?? CONSUMER_DEFAULTS.maxAckPending;
  return consume({ ...rest, maxAckPending, concurrency: rest.concurrency ?? maxAckPending, handler: wakeUpHandler(controller, map) });
}
