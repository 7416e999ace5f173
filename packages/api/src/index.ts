export * from "./types.js";
export * from "./errors.js";
export * from "./resources.js";
export * from "./labels.js";
export * from "./names.js";
export * from "./decode.js";
export * from "./defaults.js";
export * from "./validate.js";
