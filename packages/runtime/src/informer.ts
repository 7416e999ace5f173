import type { KubeObject } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import type { ObjectStore } from "@flotilla/store";
import { backoffDelay } from "./backoff.js";

/** One change an informer delivers: an object listed (initial or relist) or watched. */
export interface InformerEvent<V> {
  type: "ADDED" | "MODIFIED" | "DELETED";
  /** `namespace/name`, or `name` for a cluster-scoped object. */
  key: string;
  object: KubeObject;
  /** What the informer keeps of the object (undefined when deleted). */
  value: V | undefined;
  /** Part of the first list, delivered before `start()` resolves. */
  initial: boolean;
}

export interface InformerOptions<V> {
  store: Pick<ObjectStore, "list" | "watch">;
  /** The group/kind to follow ("work.karmada.io/ResourceBinding"). */
  gk: string;
  /** What to keep of each object (default the object itself). */
  transform?: (o: KubeObject) => V;
  /** Called for every change, in resourceVersion order per object, synchronously. */
  onEvent?: (e: InformerEvent<V>) => void;
  log?: Logger;
  /** Retry backoff after a failed list or watch (default 100 ms .. 5 s). */
  backoff?: { baseMs: number; maxMs: number };
}

interface Held<V> {
  rv: string;
  value: V;
}

const keyOf = (o: KubeObject) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name ?? ""}` : (o.metadata.name ?? ""));

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

  constructor(private readonly o: InformerOptions<V>) {
    this.transform = o.transform ?? ((x) => x as V);
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

  get(key: string): V | undefined {
    return this.items.get(key)?.value;
  }

  get size(): number {
    return this.items.size;
  }

  *entries(): IterableIterator<[string, V]> {
    for (const [k, h] of this.items) yield [k, h.value];
  }

  private deliver(type: InformerEvent<V>["type"], object: KubeObject, initial: boolean): void {
    const key = keyOf(object);
    const rv = object.metadata.resourceVersion ?? "";
    const held = this.items.get(key);
    if (held && !newer(rv, held.rv)) return;
    let value: V | undefined;
    if (type === "DELETED") this.items.delete(key);
    else this.items.set(key, { rv, value: (value = this.transform(object)) });
    this.o.onEvent?.({ type, key, object, value, initial });
  }

  /** Lists everything; delivers what changed against what is held; returns the list's resourceVersion. */
  private async relist(initial: boolean): Promise<string> {
    const r = await this.o.store.list(this.o.gk);
    const seen = new Set<string>();
    for (const obj of r.items) {
      seen.add(keyOf(obj));
      this.deliver(this.items.has(keyOf(obj)) ? "MODIFIED" : "ADDED", obj, initial);
    }
    for (const key of [...this.items.keys()]) {
      if (seen.has(key)) continue;
      const i = key.indexOf("/");
      const meta = i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
      this.items.delete(key);
      this.o.onEvent?.({ type: "DELETED", key, object: { apiVersion: "", kind: "", metadata: { ...meta, resourceVersion: r.resourceVersion } }, value: undefined, initial });
    }
    return r.resourceVersion;
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
        await new Promise<void>((r) => {
          const t = setTimeout(r, ms);
          this.ac.signal.addEventListener("abort", () => (clearTimeout(t), r()), { once: true });
        });
      }
    }
  }
}
