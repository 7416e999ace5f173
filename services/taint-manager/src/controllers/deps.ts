import type { Logger } from "@flotilla/log";
import type { EventRecorder, ObjectStore } from "@flotilla/store";
import type { Config } from "../config.js";

/** What every controller of this service is built from. */
export interface ControllerDeps {
  store: ObjectStore;
  cfg: Config;
  events: EventRecorder;
  now: () => Date;
  log: Logger;
}
