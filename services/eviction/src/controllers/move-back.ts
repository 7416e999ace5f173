import { bindingsIn } from "@flotilla/store";
import { BadRequestError, MoveBackFailedAnnotation, MoveBackSurgeAnnotation, MovingBackLabel, PlacementBeforeFailoverAnnotation, moveBackOf, parseTime, placementFrom, placementOf, rfc3339, type AnyResourceBinding } from "@flotilla/api";
import { after, done, terminal, type Reconciler } from "@flotilla/runtime";
import { SURGE_RECHECK_MS, decideMoveBack, returnCluster, type MoveBackDecision, type Surge, type Target } from "../logic/move-back.js";
import type { ControllerDeps } from "./deps.js";

export const name = "move-back";

export const EventReasonMoveBackStarted = "MoveBackStarted";
export const EventReasonMovedBack = "MovedBack";
export const EventReasonMoveBackFailed = "MoveBackFailed";
export const EventReasonMoveBackDropped = "MoveBackDropped";

export interface Deps extends ControllerDeps {
  /** Told of each move-back started, finished, reverted or dropped (for the metrics). */
  onOutcome?: (outcome: "started" | "finished" | "reverted" | "dropped") => void;
}

const text = (ts: readonly Target[]) => ts.map((t) => `${t.name}:${t.replicas}`).join(" ") || "nowhere";

function surgeOf(v: string | undefined): Surge | undefined {
  if (v === undefined) return undefined;
  try {
    const o = JSON.parse(v) as { replicas?: unknown; from?: unknown; startedAt?: unknown };
    const from = placementFrom(o.from ?? []);
    const startedAt = typeof o.startedAt === "string" ? parseTime(o.startedAt) : undefined;
    if (typeof o.replicas !== "number" || !from || startedAt === undefined) return undefined;
    return { replicas: o.replicas, from, startedAt };
  } catch {
    return undefined;
  }
}

/** Every annotation and label of move-back off the binding (mutates `b`). */
function clearRecord(b: AnyResourceBinding, keepFailed = false): void {
  const a = { ...b.metadata.annotations };
  delete a[PlacementBeforeFailoverAnnotation];
  delete a[MoveBackSurgeAnnotation];
  if (!keepFailed) delete a[MoveBackFailedAnnotation];
  b.metadata.annotations = a;
  if (b.metadata.labels?.[MovingBackLabel] !== undefined) {
    const l = { ...b.metadata.labels };
    delete l[MovingBackLabel];
    b.metadata.labels = l;
  }
}

/**
 * The move-back controller (key = `rb/<ns>/<name>` or `crb/<name>`; Flotilla's, opt-in by the
 * policy annotation `failover.flotilla.io/move-back`): reads the binding, the clusters it was
 * evicted from and how many bindings are moving back, decides (logic/move-back.ts) and writes
 * the placement and the annotations that record the move-back in one update carrying the
 * resourceVersion it read. Waits on durable timers.
 */
export function moveBack(d: Deps): Reconciler<string> {
  const bindings = bindingsIn(d.store);
  const movingBack = async (self: string): Promise<number> => (await bindingsIn(d.store).list({ labelSelector: `${MovingBackLabel}=true` })).filter((b) => b.metadata.uid !== self).length;
  return {
    name,
    async reconcile(key, { log }) {
      if (!bindings.ref(key)) terminal(new BadRequestError(`invalid key ${JSON.stringify(key)}`));
      // decided again on every attempt: what it leaves here describes the attempt written
      let dec: MoveBackDecision = { kind: "none" };
      let event: { reason: string; warning: boolean; message: string } | undefined;
      const r = await bindings.mutate(key, async (next) => {
        const ann = next.metadata.annotations ?? {};
        event = undefined;
        dec = { kind: "none" };
        if (ann[MoveBackSurgeAnnotation] === undefined && ann[PlacementBeforeFailoverAnnotation] === undefined) return undefined;
        const before = placementOf(ann[PlacementBeforeFailoverAnnotation]);
        const surge = surgeOf(ann[MoveBackSurgeAnnotation]);
        const clusters = new Map<string, ReturnType<typeof returnCluster>>();
        for (const t of before ?? []) clusters.set(t.name, returnCluster(await d.clusters.get(t.name)));
        const now = d.now().getTime();
        const failed = parseTime(ann[MoveBackFailedAnnotation]);
        dec = decideMoveBack({
          binding: next,
          config: moveBackOf(next.metadata.annotations),
          before,
          surge,
          ...(failed !== undefined ? { failedAt: failed } : {}),
          clusters,
          movingBack: surge ? 0 : await movingBack(next.metadata.uid ?? ""),
          surgeTimeoutMs: d.cfg.MOVE_BACK_SURGE_TIMEOUT,
          now,
        });
        next.spec ??= {};
        switch (dec.kind) {
          case "none":
          case "wait":
            return undefined;
          case "forget":
            clearRecord(next);
            event = { reason: EventReasonMoveBackDropped, warning: false, message: `Move-back dropped: ${dec.why}` };
            break;
          case "surge":
            next.spec.clusters = dec.clusters;
            next.metadata.annotations = { ...next.metadata.annotations, [MoveBackSurgeAnnotation]: JSON.stringify({ replicas: dec.surge.replicas, from: dec.surge.from, startedAt: rfc3339(dec.surge.startedAt) }) };
            delete next.metadata.annotations[MoveBackFailedAnnotation];
            next.metadata.labels = { ...next.metadata.labels, [MovingBackLabel]: "true" };
            event = { reason: EventReasonMoveBackStarted, warning: false, message: `Moving back to the placement before the failover (${text(before ?? [])}): ${text(dec.clusters)} until the returning copies are healthy` };
            break;
          case "finish":
            next.spec.clusters = dec.clusters;
            clearRecord(next);
            event = { reason: EventReasonMovedBack, warning: false, message: `Moved back to ${text(dec.clusters)}: the returning copies are healthy` };
            break;
          case "revert":
            next.spec.clusters = dec.clusters;
            clearRecord(next, true);
            // the record stays: the window starts again from now
            next.metadata.annotations = { ...next.metadata.annotations, [PlacementBeforeFailoverAnnotation]: ann[PlacementBeforeFailoverAnnotation]!, [MoveBackFailedAnnotation]: rfc3339(now) };
            event = { reason: EventReasonMoveBackFailed, warning: true, message: `Move-back given up: ${dec.why}; back to ${text(dec.clusters)}, tried again after the stabilization window` };
            break;
        }
        return next;
      });
      const outcome = dec as MoveBackDecision;
      if (outcome.kind === "wait") {
        log.debug({ binding: key, why: outcome.why, retryInMs: outcome.ms }, "move-back waits");
        return after(Math.max(1, outcome.ms));
      }
      if (!r.written || !r.obj || !event) return done();
      const e = event as { reason: string; warning: boolean; message: string };
      d.onOutcome?.(outcome.kind === "surge" ? "started" : outcome.kind === "finish" ? "finished" : outcome.kind === "revert" ? "reverted" : "dropped");
      log.info({ binding: key, kind: r.obj.kind, decision: outcome.kind, message: e.message }, "move-back");
      await (e.warning ? d.events.warning(r.obj, e.reason, e.message) : d.events.normal(r.obj, e.reason, e.message));
      return outcome.kind === "surge" ? after(SURGE_RECHECK_MS) : outcome.kind === "revert" ? after(1000) : done();
    },
  };
}
