export * from "./db.js";
