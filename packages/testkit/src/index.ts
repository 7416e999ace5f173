export * from "./core.js";
export * from "./service.js";
export * from "./fixtures.js";
export * from "./pg-server.js";
export * from "./nats-server.js";
export * from "./kubectl.js";
