import { compareResourceVersions, objectKeyOf, type KubeObject } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import { sleep } from "@flotilla/events";
import { gkOf, WatchProgress, type ListResult, type ObjectStore } from "@flotilla/store";
import { backoffDelay } from "./backoff.js";

/** One change an informer delivers: an object listed (initial or relist) or watched. */
export interface InformerEvent<V> {
  type: "ADDED" | "MODIFIED" | "DELETED";
  /** The object's group/kind. */
  gk: string;
  /** `namespace/name`, or `name` for a cluster-scoped object. */
  key: string;
  /** The object (for a deletion found by a list or a read, only its kind and metadata name, namespace, uid and resourceVersion). */
  object: KubeObject;
  /** What the informer keeps of the object (undefined when deleted). */
  value: V | undefined;
  /** Part of the first list, delivered before `start()` resolves (false for a relist, `resync()` or `refresh()`). */
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
  uid?: string;
  value: V;
}

/** A read outside the watch in flight (a list, or a get of one object): what was delivered meanwhile, by kindKey. */
interface Reading {
  /** The one object read (its kindKey); undefined: every object. */
  only?: string;
  delivered: Map<string, string>;
}

/** Objects remembered as found gone by a list or read before the watch said so (the oldest are forgotten first). */
const MAX_GONE = 1024;

const keyOf = (o: KubeObject) => objectKeyOf(o.metadata);
const kindKey = (gk: string, key: string) => `${gk}\u0000${key}`;

/** resourceVersions are decimal strings growing in commit order. */
const newer = (a: string, b: string) => compareResourceVersions(a, b) > 0;

/**
 * A local, always-current copy of one kind, as Kubernetes' informers keep: list, then watch
 * from the list's resourceVersion; after a watch error or a 410 Gone, list again and deliver
 * the difference (deletions included). Each replica of a service runs its own and sees every
 * change (unlike the shared wake-up consumers). Keeps `transform(object)` per key.
 *
 * A caller that must not wait for the watch (a wake-up that has to see its change now) reads
 * outside it: `refresh(key, read)` for one object, `resync()` for all. Such a read only moves
 * what is held forwards: an object's resourceVersions grow in commit order, what the watch
 * delivered while the read was in flight wins over an older read, and an object a read found gone
 * stays gone when the watch brings its late news (its uid is remembered until its deletion comes).
 */
export class Informer<V = KubeObject> {
  private readonly items = new Map<string, Held<V>>();
  /** kindKey → uids a list or read found gone while the watch had not delivered their deletion yet. */
  private readonly gone = new Map<string, Set<string>>();
  private readonly readings = new Set<Reading>();
  private readonly ac = new AbortController();
  private running?: Promise<void>;
  private synced = false;
  private readonly transform: (o: KubeObject) => V;
  private readonly gks: readonly string[];
  private readonly progress = new WatchProgress();

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

  /**
   * Reads one object outside the watch (`read`: the store's get of it) and brings what is held
   * up to it at once, delivering the difference as the watch would: for a caller that must see a
   * change the watch may not have delivered yet. A read older than what is held, or than what the
   * watch delivered while it was in flight, changes nothing. Found gone, the object is dropped
   * and the watch's late news of it ignored; when the watch changed it while the read was in
   * flight, which came first is unknown, and it is read again (three reads at most). Returns what
   * is held afterwards.
   */
  async refresh(key: string, read: () => Promise<KubeObject | undefined>, gk: string = this.gks[0]!): Promise<V | undefined> {
    const k = kindKey(gk, key);
    for (let attempt = 1; ; attempt++) {
      const r: Reading = { only: k, delivered: new Map() };
      this.readings.add(r);
      let found: KubeObject | undefined;
      try {
        found = await read();
      } finally {
        this.readings.delete(r);
      }
      const meanwhile = r.delivered.get(k);
      if (found) {
        if (meanwhile === undefined || newer(found.metadata.resourceVersion ?? "", meanwhile)) this.deliver(this.items.has(k) ? "MODIFIED" : "ADDED", found, false);
        break;
      }
      if (meanwhile === undefined) {
        const held = this.items.get(k);
        if (held) this.drop(k, held.rv, false);
        break;
      }
      if (attempt === 3) break;
    }
    return this.items.get(k)?.value;
  }

  /**
   * Whether what is held has every change of the kinds committed before this call: the watch polls
   * at once, and the answer is that poll's (false when a change waits behind a transaction still
   * open, or the watch did not poll within `timeoutMs`: the caller then reads the store itself).
   * Concurrent callers share the poll.
   */
  async caughtUp(timeoutMs = 1000): Promise<boolean> {
    if (!this.synced || this.ac.signal.aborted) return false;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([this.progress.caughtUp(), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs)))]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Lists every kind again now, as after a watch error, and delivers the difference; the watch goes on. */
  async resync(): Promise<void> {
    await this.relist(false);
  }

  private deliver(type: InformerEvent<V>["type"], object: KubeObject, initial: boolean): void {
    const key = keyOf(object);
    const gk = gkOf(object);
    const k = kindKey(gk, key);
    const rv = object.metadata.resourceVersion ?? "";
    const uid = object.metadata.uid;
    const gone = uid ? this.gone.get(k) : undefined;
    if (uid && gone?.has(uid)) {
      // a list or read found this object gone already: its deletion is the last of the watch's late news
      if (type === "DELETED" && gone.delete(uid) && !gone.size) this.gone.delete(k);
      return;
    }
    const held = this.items.get(k);
    if (held ? !newer(rv, held.rv) : type === "DELETED") return; // older, or the deletion of what a list or read already dropped
    let value: V | undefined;
    if (type === "DELETED") this.items.delete(k);
    else this.items.set(k, { gk, key, rv, uid, value: (value = this.transform(object)) });
    this.delivered(k, rv);
    this.o.onEvent?.({ type, gk, key, object, value, initial });
  }

  /**
   * Drops what is held for `k`, which a list or a read found gone, and delivers its deletion
   * (as of `rv`). The watch may not have brought that deletion yet: what it still brings of the
   * object (its uid) is ignored, up to the deletion.
   */
  private drop(k: string, rv: string, initial: boolean): void {
    const held = this.items.get(k);
    if (!held) return;
    this.items.delete(k);
    if (held.uid) {
      const gone = this.gone.get(k) ?? new Set<string>();
      this.gone.delete(k); // (re)inserted last: the oldest are forgotten first
      this.gone.set(k, gone.add(held.uid));
      if (this.gone.size > MAX_GONE) this.gone.delete(this.gone.keys().next().value!);
    }
    const i = held.key.indexOf("/");
    const meta = i < 0 ? { name: held.key } : { namespace: held.key.slice(0, i), name: held.key.slice(i + 1) };
    const object: KubeObject = { apiVersion: "", kind: held.gk.slice(held.gk.lastIndexOf("/") + 1), metadata: { ...meta, ...(held.uid ? { uid: held.uid } : {}), resourceVersion: rv } };
    this.delivered(k, rv);
    this.o.onEvent?.({ type: "DELETED", gk: held.gk, key: held.key, object, value: undefined, initial });
  }

  /** Tells the reads in flight that `k` changed. */
  private delivered(k: string, rv: string): void {
    for (const r of this.readings) {
      if (r.only !== undefined && r.only !== k) continue;
      const prev = r.delivered.get(k);
      if (prev === undefined || newer(rv, prev)) r.delivered.set(k, rv);
    }
  }

  /**
   * Lists every kind; delivers what changed against what is held; returns the resourceVersion
   * to watch from (the oldest of the lists': a change seen twice is dropped by its version).
   * What was delivered while the lists were read (a `refresh`, or the watch during a `resync`)
   * is not undone by them; whatever was delivered before, the lists see.
   */
  private async relist(initial: boolean): Promise<string> {
    const r: Reading = { delivered: new Map() };
    this.readings.add(r);
    let lists: ListResult<KubeObject>[];
    try {
      lists = await Promise.all(this.gks.map((gk) => this.o.store.list(gk)));
    } finally {
      this.readings.delete(r);
    }
    const seen = new Set<string>();
    let from: string | undefined;
    for (const l of lists) {
      if (from === undefined || newer(from, l.resourceVersion)) from = l.resourceVersion;
      for (const obj of l.items) {
        const k = kindKey(gkOf(obj), keyOf(obj));
        seen.add(k);
        const meanwhile = r.delivered.get(k);
        if (meanwhile !== undefined && !newer(obj.metadata.resourceVersion ?? "", meanwhile)) continue;
        this.deliver(this.items.has(k) ? "MODIFIED" : "ADDED", obj, initial);
      }
    }
    for (const k of [...this.items.keys()]) {
      if (seen.has(k) || r.delivered.has(k)) continue;
      this.drop(k, from!, initial);
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
        const events = await this.o.store.watch(this.o.gk, { resourceVersion: rv, signal: this.ac.signal, progress: this.progress });
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
