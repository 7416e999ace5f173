import { CORE, groupKind, type KubeObject } from "@flotilla/api";

/**
 * The store's group/kinds of the Events the TTL applies to: core/v1 (what the services record)
 * and events.k8s.io (the same object in its newer shape).
 */
export const EVENT_GKS: readonly string[] = [groupKind(CORE.event), "events.k8s.io/Event"];

/** Kubernetes' default (kube-apiserver --event-ttl). */
export const DEFAULT_EVENT_TTL_MS = 60 * 60 * 1000;

type Stamped = KubeObject & {
  lastTimestamp?: unknown;
  firstTimestamp?: unknown;
  eventTime?: unknown;
  deprecatedLastTimestamp?: unknown;
  deprecatedFirstTimestamp?: unknown;
  series?: { lastObservedTime?: unknown } | null;
};

function time(v: unknown): number | undefined {
  if (typeof v !== "string" || v === "") return undefined;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : undefined;
}

/**
 * When an Event was last seen, in ms since the epoch: the latest of the times it reports
 * (core/v1 `lastTimestamp`, `firstTimestamp`, `eventTime`, `series.lastObservedTime`;
 * events.k8s.io `eventTime`, `series.lastObservedTime`, `deprecatedLastTimestamp`,
 * `deprecatedFirstTimestamp`), else its `metadata.creationTimestamp`. Values that are not
 * timestamps are ignored; undefined when there is none at all.
 */
export function lastSeen(ev: KubeObject): number | undefined {
  const e = ev as Stamped;
  const series = e.series && typeof e.series === "object" ? e.series.lastObservedTime : undefined;
  let latest: number | undefined;
  for (const v of [e.lastTimestamp, e.firstTimestamp, e.eventTime, series, e.deprecatedLastTimestamp, e.deprecatedFirstTimestamp]) {
    const t = time(v);
    if (t !== undefined && (latest === undefined || t > latest)) latest = t;
  }
  return latest ?? time(ev.metadata?.creationTimestamp);
}

/** Whether the Event is past its TTL at `now`: last seen `ttlMs` or longer ago. An Event with no time at all is kept. */
export function expired(ev: KubeObject, now: number, ttlMs: number): boolean {
  const t = lastSeen(ev);
  return t !== undefined && now - t >= ttlMs;
}

/** How often the collector looks for expired Events: a tenth of the TTL, between 1 s and 1 min. */
export function collectEveryMs(ttlMs: number): number {
  return Math.min(60_000, Math.max(1000, Math.floor(ttlMs / 10)));
}
