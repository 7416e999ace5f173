/**
 * Which lane a key waits in: `change` for a change of its object or a related one (wake-ups,
 * timers, retries), `bulk` for work that is not news (the periodic resync).
 */
export type Lane = "change" | "bulk";

export interface WorkQueueOptions {
  /** The flow a key belongs to (default: its namespace, see namespaceFlow); flows take turns. */
  flowOf?: (key: string) => string;
  /** How many change keys go out for each bulk key while both lanes wait (default 4). */
  changesPerBulk?: number;
}

/**
 * The namespace a queue key names: `group/Kind|namespace|name` (kindKey), `namespace/name`
 * (objectKeyOf; a Work's namespace is its cluster's execution space), or `name` (cluster-scoped: "").
 */
export function namespaceFlow(key: string): string {
  const bar = key.indexOf("|");
  if (bar >= 0) {
    const end = key.indexOf("|", bar + 1);
    return end < 0 ? "" : key.slice(bar + 1, end);
  }
  const slash = key.indexOf("/");
  return slash < 0 ? "" : key.slice(0, slash);
}

/** FIFO queues per flow, served round robin: a flow with one key waits behind at most one key of every other flow. */
class FairLane {
  private readonly flows = new Map<string, { items: string[]; head: number }>();
  /** Flows with keys, in turn order. */
  private turns: string[] = [];
  private turnHead = 0;
  /** Entries left in place when their key moved to the other lane (skipped when reached). */
  private readonly moved = new Map<string, number>();
  size = 0;

  push(key: string, flow: string): void {
    let f = this.flows.get(flow);
    if (!f) {
      f = { items: [], head: 0 };
      this.flows.set(flow, f);
      this.turns.push(flow);
    }
    f.items.push(key);
    this.size++;
  }

  /** The key leaves this lane (its entry is skipped when its turn comes). */
  drop(key: string): void {
    this.moved.set(key, (this.moved.get(key) ?? 0) + 1);
    this.size--;
  }

  shift(): string | undefined {
    while (this.turnHead < this.turns.length) {
      const flow = this.turns[this.turnHead++]!;
      const f = this.flows.get(flow)!;
      let key: string | undefined;
      while (f.head < f.items.length && key === undefined) {
        const k = f.items[f.head++]!;
        const m = this.moved.get(k);
        if (m === undefined) key = k;
        else if (m > 1) this.moved.set(k, m - 1);
        else this.moved.delete(k);
      }
      if (f.head < f.items.length) {
        if (f.head > 1024 && f.head * 2 > f.items.length) [f.items, f.head] = [f.items.slice(f.head), 0];
        this.turns.push(flow);
      } else this.flows.delete(flow);
      if (this.turnHead > 1024 && this.turnHead * 2 > this.turns.length) [this.turns, this.turnHead] = [this.turns.slice(this.turnHead), 0];
      if (key !== undefined) {
        this.size--;
        return key;
      }
    }
    return undefined;
  }

  clear(): void {
    this.flows.clear();
    this.turns = [];
    this.turnHead = 0;
    this.moved.clear();
    this.size = 0;
  }
}

/**
 * The work queue of one controller, with client-go workqueue semantics: a key is queued at
 * most once; a key being processed is never handed out again until `done`, and if it was
 * added meanwhile (dirty) it is queued again then.
 *
 * And fair: keys wait in two lanes, changes ahead of bulk work (a resync of every key), which
 * still gets one key in `changesPerBulk + 1` while changes wait; a bulk key that a change
 * touches moves to the change lane. Within a lane, flows (namespaces) take turns, so a change
 * in one namespace does not wait behind a burst in others.
 */
export class WorkQueue {
  private readonly lanes: Record<Lane, FairLane> = { change: new FairLane(), bulk: new FairLane() };
  /** Keys that need work, with the lane they wait in (or will, once their run is done). */
  private readonly dirty = new Map<string, Lane>();
  private readonly processing = new Set<string>();
  private readonly flowOf: (key: string) => string;
  private readonly changesPerBulk: number;
  /** Change keys handed out since the last bulk one. */
  private changes = 0;

  constructor(o: WorkQueueOptions = {}) {
    this.flowOf = o.flowOf ?? namespaceFlow;
    this.changesPerBulk = Math.max(1, o.changesPerBulk ?? 4);
  }

  /** Marks the key as needing work. Returns true when it was queued now. */
  add(key: string, lane: Lane = "change"): boolean {
    const was = this.dirty.get(key);
    if (was !== undefined) {
      if (was === "bulk" && lane === "change") {
        this.dirty.set(key, "change");
        if (!this.processing.has(key)) {
          this.lanes.bulk.drop(key);
          this.lanes.change.push(key, this.flowOf(key));
        }
      }
      return false;
    }
    this.dirty.set(key, lane);
    if (this.processing.has(key)) return false;
    this.lanes[lane].push(key, this.flowOf(key));
    return true;
  }

  /** The next key to process (now in processing), or undefined when none is ready. */
  get(): string | undefined {
    const { change, bulk } = this.lanes;
    const fromBulk = bulk.size > 0 && (change.size === 0 || this.changes >= this.changesPerBulk);
    const key = fromBulk ? bulk.shift() : change.shift();
    if (key === undefined) return undefined;
    this.changes = fromBulk ? 0 : this.changes + 1;
    this.dirty.delete(key);
    this.processing.add(key);
    return key;
  }

  /** Processing finished. Returns true when the key was re-queued because it was added meanwhile. */
  done(key: string): boolean {
    this.processing.delete(key);
    const lane = this.dirty.get(key);
    if (lane === undefined) return false;
    this.lanes[lane].push(key, this.flowOf(key));
    return true;
  }

  /** Keys waiting to be processed. */
  get length(): number {
    return this.lanes.change.size + this.lanes.bulk.size;
  }

  get inFlight(): number {
    return this.processing.size;
  }

  isQueued(key: string): boolean {
    return this.dirty.has(key);
  }

  isProcessing(key: string): boolean {
    return this.processing.has(key);
  }

  /** Drops every queued key (processing keys stay until `done`, and are not re-queued). */
  clear(): void {
    this.lanes.change.clear();
    this.lanes.bulk.clear();
    this.dirty.clear();
  }
}
