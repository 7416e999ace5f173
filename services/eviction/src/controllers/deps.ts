import type { Logger } from "@flotilla/log";
import type { ClusterReader, EventRecorder, ObjectStore } from "@flotilla/store";
import type { Config } from "../config.js";

/** What every controller of the eviction service works with. */
export interface ControllerDeps {
  store: ObjectStore;
  clusters: ClusterReader;
  cfg: Config;
  events: EventRecorder;
  now: () => Date;
  log: Logger;
}
