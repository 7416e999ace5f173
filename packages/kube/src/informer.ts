import type { KubeObject } from "@flotilla/api";
import type { MemberClient, WatchHandle } from "./client.js";
import { StringPool } from "./string-pool.js";

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
  /** Called after every successful list, with whether lists had failed since the previous one (a reconnect). */
  onListed?(info: { afterFailure: boolean }): void;
}

const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;

/**
 * What the cache keeps of a member object: all of it but `metadata.managedFields`, which a
 * Kubernetes API server sends with every object (more than half of a Deployment's retained heap,
 * see test/cost/heap-budget.ts) and no reader uses: an apply compares the desired fields and
 * writes an object built from the desired one, status and health are read from `status`, the
 * Work from the annotations. Returns the object itself when it has none, else a copy without them.
 */
export function cacheable(obj: KubeObject): KubeObject {
  if (!("managedFields" in obj.metadata)) return obj;
  const { managedFields: _mf, ...metadata } = obj.metadata as KubeObject["metadata"] & { managedFields?: unknown };
  return { ...obj, metadata };
}

/**
 * A list-then-watch cache of one kind on one member (client-go's reflector + store, reduced):
 * lists, replays differences as events, watches from the list's resourceVersion, and lists
 * again when the watch ends or fails. `synced` is true while the cache is known current: after
 * a successful list, until a list fails or `relist()` asks for a fresh one (a cache kept from
 * before a disconnect is not trusted until the member has been listed again).
 */
export class MemberInformer {
  private readonly items = new Map<string, KubeObject>();
  /** The string values every object repeats, kept once (about a third of what the objects retain). */
  private readonly strings = new StringPool();
  private stopped = false;
  private watch?: WatchHandle;
  private endWatch?: () => void;
  private wake?: () => void;
  private loop?: Promise<void>;
  private failures = 0;
  private current = false;
  private syncWaiters: (() => void)[] = [];
  private listWaiters: (() => void)[] = [];
  /** Bumped by `relist()`: a list that started before it does not make the cache current. */
  private epoch = 0;
  lastError?: string;

  constructor(private readonly o: InformerOptions) {}

  get synced(): boolean {
    return this.current;
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
    for (const w of [...this.syncWaiters.splice(0), ...this.listWaiters.splice(0)]) w();
    await this.loop;
  }

  /**
   * Lists the member again now (the member came back, or the control plane took it over): the
   * cache is not `synced` until that list succeeded, and its differences are reported as events.
   */
  relist(): void {
    if (this.stopped) return;
    this.current = false;
    this.epoch++;
    this.failures = 0;
    this.lastError = undefined; // a fresh attempt is under way: callers wait for it (waitListed)
    this.watch?.stop();
    this.endWatch?.();
    this.wake?.();
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
    if (!cur || newer(obj, cur)) this.items.set(k, this.keep(obj));
  }

  /** What the cache keeps of an object: `cacheable`, its repeated strings shared. */
  private keep(obj: KubeObject): KubeObject {
    return this.strings.intern(cacheable(obj));
  }

  /** Forgets an object the caller just deleted. */
  forget(namespace: string | undefined, name: string): void {
    this.items.delete(`${namespace ?? ""}/${name}`);
  }

  /** Resolves once synced (or stopped), or after `timeoutMs`, with `synced`. */
  waitSynced(timeoutMs: number): Promise<boolean> {
    if (this.current || this.stopped) return Promise.resolve(this.current);
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(this.current), timeoutMs);
      this.syncWaiters.push(() => (clearTimeout(t), resolve(this.current)));
    });
  }

  /**
   * Resolves with `synced` at once when synced, else after the next list attempt (success or
   * failure), stop, or `timeoutMs`: a caller that must not act on a stale cache waits for one
   * answer from the member rather than for a member that may be down.
   */
  waitListed(timeoutMs: number): Promise<boolean> {
    if (this.current || this.stopped) return Promise.resolve(this.current);
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(this.current), timeoutMs);
      this.listWaiters.push(() => (clearTimeout(t), resolve(this.current)));
    });
  }

  private async run(): Promise<void> {
    const backoff = this.o.backoff ?? { baseMs: 500, maxMs: 30_000 };
    while (!this.stopped) {
      let rv: string;
      try {
        const afterFailure = this.failures > 0 || this.lastError !== undefined;
        const epoch = this.epoch;
        rv = await this.listOnce();
        if (epoch !== this.epoch) continue; // relist() was asked for while this list ran
        this.failures = 0;
        this.lastError = undefined;
        this.current = true;
        this.o.onListed?.({ afterFailure });
        for (const w of [...this.syncWaiters.splice(0), ...this.listWaiters.splice(0)]) w();
      } catch (e) {
        if (this.stopped) break;
        this.failures++;
        this.lastError = (e as Error).message;
        this.current = false;
        for (const w of this.listWaiters.splice(0)) w();
        this.o.onError?.(e);
        await this.sleep(Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(this.failures - 1, 16)));
        continue;
      }
      const started = Date.now();
      const epoch = this.epoch;
      await this.watchFrom(rv, epoch);
      // A watch that ends at once (refused, 410 Gone) should not spin; one ended by relist() lists at once.
      if (!this.stopped && epoch === this.epoch && Date.now() - started < 1000) await this.sleep(Math.min(backoff.maxMs, backoff.baseMs * 2));
    }
  }

  private async listOnce(): Promise<string> {
    const { items, resourceVersion } = await this.o.client.list(this.o.apiVersion, this.o.kind, { labelSelector: this.o.labelSelector, timeoutMs: 30_000 });
    const seen = new Set<string>();
    for (const listed of items) {
      const obj = this.keep(listed);
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
    return resourceVersion;
  }

  private watchFrom(resourceVersion: string, epoch: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.stopped) return resolve();
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        this.endWatch = undefined;
        resolve();
      };
      this.endWatch = finish;
      this.o.client
        .watch(
          this.o.apiVersion,
          this.o.kind,
          { labelSelector: this.o.labelSelector, resourceVersion: resourceVersion || undefined, timeoutSeconds: this.o.watchTimeoutSeconds ?? 300 },
          {
            onEvent: (type, watched) => {
              if (type === "ERROR") {
                this.watch?.stop();
                return finish();
              }
              if (type === "BOOKMARK" || !watched?.metadata) return;
              const obj = this.keep(watched);
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
            if (this.stopped || epoch !== this.epoch) h.stop();
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
