export { startSimulator, type Simulator, type StartOptions } from "./simulator.js";
export { SimCluster, type ClusterInfo, type ResourceSummary } from "./cluster.js";
export {
  ConfigError,
  DEFAULT_READY_DELAY_MS,
  DEFAULT_KUBERNETES_VERSION,
  FAULT_MODES,
  TOPOLOGY,
  expandNodes,
  generateClusters,
  loadConfigFile,
  parseConfig,
  validateConfig,
  type AdminConfig,
  type ClusterConfig,
  type FaultMode,
  type FaultSpec,
  type GenerateOptions,
  type NodeConfig,
  type SimulatorConfig,
} from "./config.js";
export { BUILTIN, DEFAULT_APIS, resolveApis, type ApiResource, type ApiSpec } from "./api-catalog.js";
export { bytesOf, cpuMillis, formatBytes, formatCpu, parseQuantity } from "./quantity.js";
export { podRequests, summarize, type PodRequest, type Resources } from "./capacity.js";
export type { KObject, ObjectMeta } from "./store.js";
