import type { WakeUp } from "@flotilla/api";
import { CONSUMER_DEFAULTS, consume, type ConsumeOptions, type WakeUpConsumer, type WakeUpHandler } from "@flotilla/events";
import type { Controller } from "./controller.js";

/** Maps a wake-up to the controller keys it concerns (one event can fan out to many keys). */
export type KeyMapper = (w: WakeUp) => string[] | Promise<string[]>;

/** "namespace/name", or "name" for a cluster-scoped object: the usual key of a wake-up's own object. */
export function objectKey(w: Pick<WakeUp, "namespace" | "name">): string {
  return w.namespace ? `${w.namespace}/${w.name ?? ""}` : (w.name ?? "");
}

/** Maps a wake-up to its own object's key. */
export const byObjectKey: KeyMapper = (w) => [objectKey(w)];

/**
 * A wake-up handler that enqueues every mapped key and resolves once a reconcile of each,
 * started after the wake-up arrived, has succeeded; the consumer acks the message only
 * then, so a crash before that redelivers it.
 */
export function wakeUpHandler(controller: Pick<Controller, "enqueue">, map: KeyMapper): WakeUpHandler {
  return async (w) => {
    const keys = await map(w);
    if (keys.length === 0) return;
    await Promise.all([...new Set(keys)].map((k) => controller.enqueue(k)));
  };
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
