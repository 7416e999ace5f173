// GracefulEvictCluster, RemoveCluster and the purge mode of a taint eviction live in @flotilla/api
// (application failover evicts too, and the scheduler's failure simulation mirrors the taint manager)
export { PurgeModeDirectly, PurgeModeGracefully, PurgeModeNever, gracefulEvictCluster, purgeModeFor, removeCluster, type EvictOptions, type PurgeMode } from "@flotilla/api";
