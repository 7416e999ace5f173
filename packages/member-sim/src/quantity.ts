// Kubernetes resource quantities, under the names the simulator's code reads best with
// (CPU in millicores, memory in bytes); the parser itself is @flotilla/api's.
export {
  QuantityError,
  parseQuantity,
  milliValue as cpuMillis,
  value as bytesOf,
  formatMilli as formatCpu,
  formatBinary as formatBytes,
} from "@flotilla/api";
