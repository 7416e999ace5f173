import type { KubeObject } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import { sleep } from "@flotilla/events";
import { gkOf, type ObjectStore } from "@flotilla/store";
import { backoffDelay } from "./backoff.js";

/** One change an informer delivers: an object listed (initial or relist) or watched. */
export interface InformerEvent<V> {
  type: "ADDED" | "MODIFIED" | "DELETED";
  /** The object's group/kind. */
  gk: string;
  /** `namespace/name`, or `name` for a cluster-scoped object. */
  key: string;
  /** The object (for a deletion found by a relist, only its kind and metadata name, namespace and resourceVersion). */
  object: KubeObject;
  /** What the informer keeps of the object (undefined when deleted). */
  value: V | undefined;
  /** Part of the first list, delivered before `start()` resolves. */
  initial: boolean;
}

export interface InformerOptions<V> {
  store: Pick<ObjectStore, "list" | "watch">;
  /** The group/kind to follow ("work.karmada.io/ResourceBinding"), or several in one watch. */
  gk: string | readonly string[];
  /** What to keep of each object (default the object itself). */
  transform?: (o: KubeObject) => V;
  /** Called for every change, in resourceVersion order per object, synchronously. */
  onEvent?: (e: InformerEvent<V>) => void;
  log?: Logger;
  /** Retry backoff after a failed list or watch (default 100 ms .. 5 s). */
  backoff?: { baseMs: number; maxMs: number };
}

interface Held<V> {
  gk: string;
  key: string;
  rv: string;
  value: V;
}

const keyOf = (o: KubeObject) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name ?? ""}` : (o.metadata.name ?? ""));
const kindKey = (gk: string, key: string) => `${gk}\u0000${key}`;

/** resourceVersions are decimal strings growing in commit order. */
const newer = (a: string, b: string) => (a.length !== b.length ? a.length > b.length : a > b);

/**
 * A local, always-current copy of one kind, as Kubernetes' informers keep: list, then watch
 * from the list's resourceVersion; after a watch error or a 410 Gone, list again and deliver
 * the difference (deletions included). Each replica of a service runs its own and sees every
 * change (unlike the shared wake-up consumers). Keeps `transform(object)` per key.
 */
export class Informer<V = KubeObject> {
  private readonly items = new Map<string, Held<V>>();
  private readonly ac = new AbortController();
  private running?: Promise<void>;
  private synced = false;
  private readonly transform: (o: KubeObject) => V;
  private readonly gks: readonly string[];

  constructor(private readonly o: InformerOptions<V>) {
    this.transform = o.transform ?? ((x) => x as V);
    this.gks = typeof o.gk === "string" ? [o.gk] : o.gk;
  }

  /** Lists (delivering `initial` events), then follows the watch in the background. */
  async start(): Promise<void> {
    if (this.running) return;
    const rv = await this.relist(true);
    this.synced = true;
    this.running = this.follow(rv);
  }

  async stop(): Promise<void> {
    this.ac.abort();
    await this.running;
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  /** The value kept for `namespace/name` (or `name`) of the kind (default: the first kind followed). */
  get(key: string, gk: string = this.gks[0]!): V | undefined {
    return this.items.get(kindKey(gk, key))?.value;
  }

  get size(): number {
    return this.items.size;
  }

  /** Every object's `namespace/name` (or `name`) and the value kept, of every kind followed. */
  *entries(): IterableIterator<[string, V]> {
    for (const h of this.items.values()) yield [h.key, h.value];
  }

  private deliver(type: InformerEvent<V>["type"], object: KubeObject, initial: boolean): void {
    const key = keyOf(object);
    const gk = gkOf(object);
    const k = kindKey(gk, key);
    const rv = object.metadata.resourceVersion ?? "";
    const held = this.items.get(k);
    if (held && !newer(rv, held.rv)) return;
    let value: V | undefined;
    if (type === "DELETED") this.items.delete(k);
    else this.items.set(k, { gk, key, rv, value: (value = this.transform(object)) });
    this.o.onEvent?.({ type, gk, key, object, value, initial });
  }

  /**
   * Lists every kind; delivers what changed against what is held; returns the resourceVersion
   * to watch from (the oldest of the lists': a change seen twice is dropped by its version).
   */
  private async relist(initial: boolean): Promise<string> {
    const lists = await Promise.all(this.gks.map((gk) => this.o.store.list(gk)));
    const seen = new Set<string>();
    let from: string | undefined;
    for (const r of lists) {
      if (from === undefined || newer(from, r.resourceVersion)) from = r.resourceVersion;
      for (const obj of r.items) {
        const k = kindKey(gkOf(obj), keyOf(obj));
        seen.add(k);
        this.deliver(this.items.has(k) ? "MODIFIED" : "ADDED", obj, initial);
      }
    }
    for (const [k, held] of [...this.items]) {
      if (seen.has(k)) continue;
      this.items.delete(k);
      const i = held.key.indexOf("/");
      const meta = i < 0 ? { name: held.key } : { namespace: held.key.slice(0, i), name: held.key.slice(i + 1) };
      const object: KubeObject = { apiVersion: "", kind: held.gk.slice(held.gk.lastIndexOf("/") + 1), metadata: { ...meta, resourceVersion: from } };
      this.o.onEvent?.({ type: "DELETED", gk: held.gk, key: held.key, object, value: undefined, initial });
    }
    return from!;
  }

  private async follow(fromRv: string): Promise<void> {
    let rv = fromRv;
    let failures = 0;
    const backoff = this.o.backoff ?? { baseMs: 100, maxMs: 5000 };
    while (!this.ac.signal.aborted) {
      try {
        // after any failure, list again: what the watch missed is delivered as a difference
        if (failures > 0) rv = await this.relist(false);
        const events = await this.o.store.watch(this.o.gk, { resourceVersion: rv, signal: this.ac.signal });
        for await (const e of events) {
          failures = 0;
          this.deliver(e.type, e.object, false);
          rv = e.object.metadata.resourceVersion ?? rv;
        }
      } catch (e) {
        if (this.ac.signal.aborted) return;
        failures++;
        const ms = backoffDelay(failures, backoff);
        this.o.log?.warn({ err: e, gk: this.o.gk, failures, retryInMs: ms }, "informer watch failed; listing again");
        await sleep(ms, this.ac.signal);
      }
    }
  }
}
