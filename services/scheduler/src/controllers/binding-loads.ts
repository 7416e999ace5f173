import { GK, bindingKey, type AnyResourceBinding } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import { Informer } from "@flotilla/runtime";
import type { ObjectStore } from "@flotilla/store";
import { bindingLoad, type AssumedLedger } from "../logic/assumed.js";

/**
 * Every binding, followed by this replica (a watch, not the shared wake-ups) into the assumed
 * ledger, so that it knows the load it and the other replicas assigned; the first list rebuilds
 * the ledger after a restart. The informer keeps no part of a binding but its key and version:
 * what the ledger needs of it (`bindingLoad`) is taken as each version is delivered.
 */
export function bindingLoads(o: { store: Pick<ObjectStore, "list" | "watch">; ledger: AssumedLedger; log: Logger }): Informer<undefined> {
  return new Informer<undefined>({
    store: o.store,
    gk: [GK.resourceBinding, GK.clusterResourceBinding],
    transform: () => undefined,
    log: o.log,
    onEvent: (e) => o.ledger.observe(bindingKey(e.object), e.object.metadata.resourceVersion, e.type === "DELETED" ? undefined : bindingLoad(e.object as AnyResourceBinding), Date.now(), { initial: e.initial }),
  });
}
