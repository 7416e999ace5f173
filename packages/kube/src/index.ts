export * from "./errors.js";
export { QuantityError, parseQuantity, milliValue, value, formatMilli, formatBinary, parseResourceList, formatResourceList, type ResourceAmounts } from "@flotilla/api";
export * from "./retain.js";
export * from "./client.js";
export * from "./cache.js";
export * from "./informer.js";
