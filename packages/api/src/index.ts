export * from "./types.js";
export * from "./errors.js";
export * from "./resources.js";
export * from "./labels.js";
