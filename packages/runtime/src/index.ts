export * from "./result.js";
export * from "./backoff.js";
export * from "./queue.js";
export * from "./timers.js";
export * from "./metrics.js";
export * from "./controller.js";
export * from "./wakeups.js";
export * from "./service.js";
