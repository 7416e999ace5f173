export * from "./result.js";
export * from "./classify.js";
export * from "./backoff.js";
export * from "./queue.js";
export * from "./timers.js";
export * from "./metrics.js";
export * from "./controller.js";
export { keyLocks, KEY_LOCK_CLASS, type KeyLocks } from "@flotilla/store";
export * from "./wakeups.js";
export * from "./service.js";
export * from "./host.js";
export * from "./informer.js";
export * from "./seen.js";
export * from "./tracing.js";
// one abortable sleep for every loop: resolves after `ms` or when the signal aborts, and leaves no listener behind
export { sleep } from "@flotilla/events";
