export * from "./errors.js";
export * from "./quantity.js";
export * from "./retain.js";
export * from "./client.js";
export * from "./cache.js";
export * from "./informer.js";
