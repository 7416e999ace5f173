import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@flotilla/api";
import { collectEveryMs, expired, lastSeen } from "./event-ttl.js";

const at = (s: string) => Date.parse(s);
const core = (o: Record<string, unknown>, created = "2025-01-01T00:00:00Z"): KubeObject =>
  ({ apiVersion: "v1", kind: "Event", metadata: { name: "e", namespace: "default", creationTimestamp: created }, ...o }) as KubeObject;
const modern = (o: Record<string, unknown>, created = "2025-01-01T00:00:00Z"): KubeObject =>
  ({ apiVersion: "events.k8s.io/v1", kind: "Event", metadata: { name: "e", namespace: "default", creationTimestamp: created }, ...o }) as KubeObject;

test("lastSeen", async (t) => {
  const cases: [string, KubeObject, number | undefined][] = [
    ["a core Event is as recent as its lastTimestamp", core({ firstTimestamp: "2025-01-01T00:00:00Z", lastTimestamp: "2025-01-01T05:00:00Z" }), at("2025-01-01T05:00:00Z")],
    ["a repeat counted up moves lastTimestamp past the creation", core({ firstTimestamp: "2025-01-01T00:00:00Z", lastTimestamp: "2025-01-02T00:00:00Z", count: 9 }), at("2025-01-02T00:00:00Z")],
    ["an Event with only an eventTime (MicroTime) uses it", core({ eventTime: "2025-01-01T03:00:00.123456Z" }), at("2025-01-01T03:00:00.123Z")],
    ["a series' lastObservedTime counts when it is the latest", core({ eventTime: "2025-01-01T01:00:00.000000Z", series: { count: 3, lastObservedTime: "2025-01-01T04:00:00.000000Z" } }), at("2025-01-01T04:00:00Z")],
    ["an events.k8s.io Event's deprecatedLastTimestamp counts too", modern({ eventTime: "2025-01-01T01:00:00.000000Z", deprecatedLastTimestamp: "2025-01-01T02:00:00Z" }), at("2025-01-01T02:00:00Z")],
    ["an Event reporting no time falls back to its creationTimestamp", core({}, "2025-03-01T00:00:00Z"), at("2025-03-01T00:00:00Z")],
    ["a time that is not a timestamp is ignored", core({ lastTimestamp: "yesterday", firstTimestamp: 42 }, "2025-03-01T00:00:00Z"), at("2025-03-01T00:00:00Z")],
    ["a null series is ignored", core({ series: null, lastTimestamp: "2025-01-01T06:00:00Z" }), at("2025-01-01T06:00:00Z")],
    ["an object with no time at all has none", { apiVersion: "v1", kind: "Event", metadata: { name: "e" } } as KubeObject, undefined],
  ];
  for (const [name, ev, want] of cases) await t.test(name, () => assert.equal(lastSeen(ev), want));
});

test("expired", async (t) => {
  const hour = 3_600_000;
  const ev = core({ lastTimestamp: "2025-01-01T00:00:00Z" });
  const cases: [string, KubeObject, number, boolean][] = [
    ["an Event last seen a TTL ago is expired", ev, at("2025-01-01T01:00:00Z"), true],
    ["an Event last seen just under a TTL ago is kept", ev, at("2025-01-01T00:59:59Z"), false],
    ["an Event seen again recently is kept, however old its first occurrence", core({ firstTimestamp: "2024-01-01T00:00:00Z", lastTimestamp: "2025-01-01T00:30:00Z" }), at("2025-01-01T01:00:00Z"), false],
    ["an Event with no time at all is kept", { apiVersion: "v1", kind: "Event", metadata: { name: "e" } } as KubeObject, at("2030-01-01T00:00:00Z"), false],
  ];
  for (const [name, e, now, want] of cases) await t.test(name, () => assert.equal(expired(e, now, hour), want));
});

test("collectEveryMs", async (t) => {
  const cases: [string, number, number][] = [
    ["the default hour is looked at every minute", 3_600_000, 60_000],
    ["a ten-minute TTL every minute", 600_000, 60_000],
    ["a five-minute TTL every 30 s", 300_000, 30_000],
    ["a short TTL no more often than every second", 2000, 1000],
  ];
  for (const [name, ttl, want] of cases) await t.test(name, () => assert.equal(collectEveryMs(ttl), want));
});
