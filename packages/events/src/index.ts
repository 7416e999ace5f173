export * from "./subjects.js";
export * from "./stream.js";
export * from "./outbox.js";
export * from "./relay.js";
export * from "./consumer.js";
export * from "./log.js";
// The NATS pieces callers need next to these helpers, so services and tests import one package.
export { jetstream, jetstreamManager } from "@nats-io/jetstream";
export type { JetStreamClient, JetStreamManager, JsMsg } from "@nats-io/jetstream";
export type { NatsConnection } from "@nats-io/transport-node";
