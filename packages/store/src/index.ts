export * from "./db.js";
export * from "./store.js";
