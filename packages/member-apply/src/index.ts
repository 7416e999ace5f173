export * from "./logic/work.js";
export * from "./logic/health.js";
export * from "./logic/resources.js";
export * from "./logic/modeling.js";
export * from "./logic/cluster-ready.js";
export * from "./apply.js";
export * from "./collect.js";
export * from "./objects.js";
