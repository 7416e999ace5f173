export * from "./db.js";
export * from "./store.js";
export * from "./indexers.js";
export * from "./events.js";
export * from "./cluster-reader.js";
export * from "./batcher.js";
export * from "./leader.js";
