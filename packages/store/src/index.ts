export * from "./db.js";
export { createClient, sibling, transaction, isConnectionLost, isDriverFault, reconnectDelayS, STARTUP_PADDING, type ClientOptions, type TransactionSql } from "./driver.js";
export * from "./store.js";
export * from "./indexers.js";
export * from "./events.js";
export * from "./cluster-reader.js";
export * from "./batcher.js";
export * from "./leader.js";
export * from "./seal.js";
