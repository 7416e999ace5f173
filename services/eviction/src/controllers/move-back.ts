import { bindingsIn, type LimitLeases } from "@flotilla/store";
import { BadRequestError, MoveBackFailedAnnotation, MoveBackSurgeAnnotation, MovingBackLabel, PlacementBeforeFailoverAnnotation, moveBackOf, parseTime, placementFrom, placementOf, rfc3339, type AnyResourceBinding } from "@flotilla/api";
import { after, done, terminal, type Reconciler } from "@flotilla/runtime";
import { SURGE_RECHECK_MS, decideMoveBack, returnCluster, type MoveBackDecision, type MoveBackInput, type SlotClaim, type Surge, type Target } from "../logic/move-back.js";
import type { ControllerDeps } from "./deps.js";

export const name = "move-back";

export const EventReasonMoveBackStarted = "MoveBackStarted";
export const EventReasonMovedBack = "MovedBack";
export const EventReasonMoveBackFailed = "MoveBackFailed";
export const EventReasonMoveBackDropped = "MoveBackDropped";

/** The fleet-wide semaphore of move-back's maxConcurrent (`limit_leases`). */
export const MOVE_BACK_LIMIT = "move-back";
/**
 * How long a granted slot is held by its claim alone: the binding's surge (and its
 * moving-back label, which then holds the slot) is written within this, or the slot is free
 * again. Covers a crash between the claim and the write.
 */
export const SLOT_GRACE_MS = 30_000;

export interface Deps extends ControllerDeps {
  /** The fleet-wide limits (move-back slots). */
  limits: LimitLeases;
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
 * policy annotation `failover.flotilla.io/move-back`): reads the binding and the clusters it was
 * evicted from, decides (logic/move-back.ts) and writes the placement and the annotations that
 * record the move-back in one update carrying the resourceVersion it read. Waits on durable
 * timers.
 *
 * `maxConcurrent` holds for the whole fleet of eviction replicas: a binding ready to surge first
 * claims a slot of the `move-back` limit (`LimitLeases.claim`: one transaction under the
 * limit's advisory lock), and writes its surge only with one granted. The slot is then held by
 * the binding's moving-back label (its claim row alone holds it for SLOT_GRACE_MS, the time to
 * write the surge), so it is free again as soon as the move-back finishes, reverts or is
 * dropped, or the binding is deleted; the claim row is given back then too (and one left by a
 * crash expires with its grace). The surge cannot be written in the claim's transaction: writes
 * go through the store's shared write batches.
 */
export function moveBack(d: Deps): Reconciler<string> {
  const bindings = bindingsIn(d.store);
  return {
    name,
    async reconcile(key, { log }) {
      if (!bindings.ref(key)) terminal(new BadRequestError(`invalid key ${JSON.stringify(key)}`));
      // decided again on every attempt: what it leaves here describes the attempt written
      let dec: MoveBackDecision = { kind: "none" };
      let event: { reason: string; warning: boolean; message: string } | undefined;
      // the binding's uid once a slot was claimed for it in this reconcile
      let claimed: string | undefined;
      const r = await bindings
        .mutate(key, async (next) => {
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
          const input: MoveBackInput = {
            binding: next,
            config: moveBackOf(next.metadata.annotations),
            before,
            surge,
            ...(failed !== undefined ? { failedAt: failed } : {}),
            clusters,
            surgeTimeoutMs: d.cfg.MOVE_BACK_SURGE_TIMEOUT,
            slotRecheckMs: d.cfg.MOVE_BACK_SLOT_RECHECK,
            now,
          };
          dec = decideMoveBack(input);
          if (dec.kind === "claim") {
            const uid = next.metadata.uid ?? "";
            const slot: SlotClaim = await d.limits.claim({ limit: MOVE_BACK_LIMIT, holder: uid, max: dec.max, graceMs: SLOT_GRACE_MS, label: MovingBackLabel });
            if (slot.granted) claimed = uid;
            dec = decideMoveBack({ ...input, slot });
          }
          next.spec ??= {};
          switch (dec.kind) {
            case "none":
            case "wait":
            case "claim":
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
        })
        .catch(async (e: unknown) => {
          // the surge may or may not be written: if it is, its label holds the slot without the row
          if (claimed) await d.limits.release(MOVE_BACK_LIMIT, [claimed]).catch(() => undefined);
          throw e;
        });
      const outcome = dec as MoveBackDecision;
      // a slot claimed now, or one this write ended (finish, revert, drop), goes once the binding does not move back: its label is off, or it is gone
      const uid = claimed ?? (r.written ? r.obj?.metadata.uid : undefined);
      if (uid && r.obj?.metadata.labels?.[MovingBackLabel] !== "true") await d.limits.release(MOVE_BACK_LIMIT, [uid]);
      if (outcome.kind === "wait") {
        // the bindings refused a slot at one instant do not all claim again at the next
        const ms = outcome.slot ? outcome.ms * (1 + Math.random() / 5) : outcome.ms;
        log.debug({ binding: key, why: outcome.why, retryInMs: ms }, "move-back waits");
        return after(Math.max(1, ms));
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
