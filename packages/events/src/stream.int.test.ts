import { test } from "node:test";
import assert from "node:assert/strict";
import { jetstreamManager } from "@nats-io/jetstream";
import { NATS_URL, uniqueName } from "@flotilla/testkit";
import { connectNats, ensureStream } from "./stream.js";

async function withStream(fn: (o: { jsm: Awaited<ReturnType<typeof jetstreamManager>>; stream: string; prefix: string }) => Promise<void>): Promise<void> {
  const nc = await connectNats({ servers: NATS_URL });
  const jsm = await jetstreamManager(nc);
  const stream = uniqueName("ST").toUpperCase();
  try {
    await fn({ jsm, stream, prefix: uniqueName("st") });
  } finally {
    await jsm.streams.delete(stream).catch(() => {});
    await nc.close();
  }
}

test("a stream created with replicas 1 has one copy, and the same setting again changes nothing", () =>
  withStream(async ({ jsm, stream, prefix }) => {
    const created = await ensureStream(jsm, { stream, prefix, replicas: 1 });
    assert.equal(created.config.num_replicas, 1);
    const again = await ensureStream(jsm, { stream, prefix, replicas: 1 });
    assert.equal(again.config.num_replicas, 1);
    assert.equal(String(again.created), String(created.created));
  }));

test("a caller that does not name replicas keeps the stream's", () =>
  withStream(async ({ jsm, stream, prefix }) => {
    await ensureStream(jsm, { stream, prefix, replicas: 1 });
    const kept = await ensureStream(jsm, { stream, prefix });
    assert.equal(kept.config.num_replicas, 1);
  }));

// A single server refuses a new stream with 3 replicas; an existing one is updated (nats-server
// 2.9 records 3) or refused (later servers), but either way the setting reaches the server.
test("replicas 3 reach the server, which, unclustered, refuses to create such a stream", () =>
  withStream(async ({ jsm, stream, prefix }) => {
    await assert.rejects(ensureStream(jsm, { stream, prefix, replicas: 3 }), /replicas|cluster/i);
    await ensureStream(jsm, { stream, prefix, replicas: 1 });
    const outcome = await ensureStream(jsm, { stream, prefix, replicas: 3 }).then(
      (i) => i.config.num_replicas,
      (e: Error) => e.message,
    );
    assert.ok(outcome === 3 || /replicas|cluster/i.test(String(outcome)), `unexpected outcome ${outcome}`);
  }));
