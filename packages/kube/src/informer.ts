import type { KubeObject } from "@flotilla/api";
import type { MemberClient, WatchHandle } from "./client.js";

export type InformerEvent = "ADDED" | "MODIFIED" | "DELETED";

export interface InformerOptions {
  client: MemberClient;
  apiVersion: string;
  kind: string;
  /** Only objects matching this selector are cached (e.g. "karmada.io/managed=true"). */
  labelSelector?: string;
  /** Called for every change of the cache: watch events, and the differences a re-list finds. */
  onChange(type: InformerEvent, obj: KubeObject): void;
  /** Called when a list fails (the informer retries with backoff). */
  onError?(err: unknown): void;
  /** The server ends each watch after this, and the informer re-lists (default 300 s). */
  watchTimeoutSeconds?: number;
  /** Backoff between failed lists (default 500 ms doubling to 30 s). */
  backoff?: { baseMs: number; maxMs: number };
}

const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;

/**
 * A list-then-watch cache of one kind on one member (client-go's reflector + store, reduced):
 * lists, replays differences as events, watches from the list's resourceVersion, and lists
 * again when the watch ends or fails. `synced` is true after the first successful list.
 */
export class MemberInformer {
  private readonly items = new Map<string, KubeObject>();
  private stopped = false;
  private watch?: WatchHandle;
  private wake?: () => void;
  private loop?: Promise<void>;
  private failures = 0;
  private syncedOnce = false;
  private syncWaiters: (() => void)[] = [];
  lastError?: string;

  constructor(private readonly o: InformerOptions) {}

  get synced(): boolean {
    return this.syncedOnce;
  }

  get size(): number {
    return this.items.size;
  }

  start(): this {
    this.loop ??= this.run();
    return this;
  }

  /** Stops watching; the cache stays readable. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.watch?.stop();
    this.wake?.();
    for (const w of this.syncWaiters.splice(0)) w();
    await this.loop;
  }

  /** Cuts a backoff short (e.g. the member just became reachable again). */
  kick(): void {
    this.failures = 0;
    this.wake?.();
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.items.get(`${namespace ?? ""}/${name}`);
  }

  list(): KubeObject[] {
    return [...this.items.values()];
  }

  /** Records an object the caller just wrote, unless the cache already holds a newer version. */
  observe(obj: KubeObject): void {
    const k = keyOf(obj);
    const cur = this.items.get(k);
    if (!cur || newer(obj, cur)) this.items.set(k, obj);
  }

  /** Forgets an object the caller just deleted. */
  forget(namespace: string | undefined, name: string): void {
    this.items.delete(`${namespace ?? ""}/${name}`);
  }

  /** Resolves once synced (or stopped), or after `timeoutMs`. */
  waitSynced(timeoutMs: number): Promise<boolean> {
    if (this.syncedOnce || this.stopped) return Promise.resolve(this.syncedOnce);
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(this.syncedOnce), timeoutMs);
      this.syncWaiters.push(() => (clearTimeout(t), resolve(this.syncedOnce)));
    });
  }

  private async run(): Promise<void> {
    const backoff = this.o.backoff ?? { baseMs: 500, maxMs: 30_000 };
    while (!this.stopped) {
      let rv: string;
      try {
        rv = await this.relist();
        this.failures = 0;
        this.lastError = undefined;
      } catch (e) {
        this.failures++;
        this.lastError = (e as Error).message;
        this.o.onError?.(e);
        await this.sleep(Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(this.failures - 1, 16)));
        continue;
      }
      const started = Date.now();
      await this.watchFrom(rv);
      // A watch that ends at once (refused, 410 Gone) should not spin.
      if (!this.stopped && Date.now() - started < 1000) await this.sleep(Math.min(backoff.maxMs, backoff.baseMs * 2));
    }
  }

  private async relist(): Promise<string> {
    const { items, resourceVersion } = await this.o.client.list(this.o.apiVersion, this.o.kind, { labelSelector: this.o.labelSelector, timeoutMs: 30_000 });
    const seen = new Set<string>();
    for (const obj of items) {
      obj.apiVersion ??= this.o.apiVersion;
      obj.kind ??= this.o.kind;
      const k = keyOf(obj);
      seen.add(k);
      const cur = this.items.get(k);
      this.items.set(k, obj);
      if (!cur) this.o.onChange("ADDED", obj);
      else if (cur.metadata.resourceVersion !== obj.metadata.resourceVersion) this.o.onChange("MODIFIED", obj);
    }
    for (const [k, obj] of [...this.items]) {
      if (seen.has(k)) continue;
      this.items.delete(k);
      this.o.onChange("DELETED", obj);
    }
    if (!this.syncedOnce) {
      this.syncedOnce = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
    return resourceVersion;
  }

  private watchFrom(resourceVersion: string): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.stopped) return resolve();
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        resolve();
      };
      this.o.client
        .watch(
          this.o.apiVersion,
          this.o.kind,
          { labelSelector: this.o.labelSelector, resourceVersion: resourceVersion || undefined, timeoutSeconds: this.o.watchTimeoutSeconds ?? 300 },
          {
            onEvent: (type, obj) => {
              if (type === "ERROR") {
                this.watch?.stop();
                return finish();
              }
              if (type === "BOOKMARK" || !obj?.metadata) return;
              obj.apiVersion ??= this.o.apiVersion;
              obj.kind ??= this.o.kind;
              const k = keyOf(obj);
              if (type === "DELETED") {
                this.items.delete(k);
                this.o.onChange("DELETED", obj);
                return;
              }
              const cur = this.items.get(k);
              // an older version, or the very version already cached (e.g. recorded by `observe` after our own write): nothing new
              if (cur && (cur.metadata.resourceVersion === obj.metadata.resourceVersion || !newer(obj, cur))) return;
              this.items.set(k, obj);
              this.o.onChange(cur ? "MODIFIED" : "ADDED", obj);
            },
            onDone: () => finish(),
          },
        )
        .then(
          (h) => {
            this.watch = h;
            if (this.stopped) h.stop();
          },
          () => finish(),
        );
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = undefined;
        resolve();
      };
    });
  }
}

/** Whether `a` is a later version than `b` (numeric resourceVersions; anything else counts as newer). */
export function newer(a: KubeObject, b: KubeObject): boolean {
  const x = a.metadata.resourceVersion ?? "";
  const y = b.metadata.resourceVersion ?? "";
  if (/^\d+$/.test(x) && /^\d+$/.test(y)) return x.length !== y.length ? x.length > y.length : x > y;
  return x !== y;
}
