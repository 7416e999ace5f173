import { ExecutionControllerFinalizer, executionNamespace, setCondition, type KubeObject, type Work } from "@flotilla/api";
import type { MemberClient } from "@flotilla/kube";
import type { Logger } from "@flotilla/log";
import {
  appliedCondition,
  applyWork,
  deleteWork,
  dispatchingCondition,
  isSuspended,
  manifestsOf,
  retryable,
  sameWorkStatus,
  workKeyOf,
  MemberObjects,
  type WorkStatusJson,
} from "@flotilla/member-apply";
import { WorkQueue, sleep } from "@flotilla/runtime";
import { GatewayUnreachableError, isConflictError, type GatewayClient, type WatchEvent } from "../gateway-client.js";
import { afterWatch } from "../logic/watch.js";

export interface WorkSyncDeps {
  gateway: GatewayClient;
  member: MemberClient;
  cluster: string;
  log: Logger;
  concurrency: number;
  retryMs: number;
  resyncMs: number;
  watchTimeoutSeconds: number;
  memberWatchTimeoutSeconds?: number;
  listWaitMs?: number;
  backoff?: { baseMs: number; maxMs: number };
  now?: () => Date;
}


/**
 * The agent's execution controller: lists and watches the Works of `karmada-es-<cluster>`
 * through the gateway (resuming from the last resourceVersion, listing again on 410 Gone),
 * applies them to the member with the execution service's rules (@flotilla/member-apply), holds
 * their `karmada.io/execution-controller` finalizer, and writes their status through works/status.
 */
export class WorkSync {
  readonly namespace: string;
  private readonly queue = new WorkQueue();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly ac = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private loops: Promise<void>[] = [];
  private resync?: NodeJS.Timeout;
  /** Where the watch stands: the last resourceVersion seen ("" before the first list). */
  resourceVersion = "";
  /** How many times the Works were listed (the first list and every relist). */
  lists = 0;

  constructor(private readonly d: WorkSyncDeps) {
    this.namespace = executionNamespace(d.cluster);
    this.state = new MemberObjects({
      watchTimeoutSeconds: d.memberWatchTimeoutSeconds,
      onChange: (_type, obj) => this.memberChanged(obj),
      onError: (err, kind) => this.d.log.debug({ err, kind }, "member list failed; retrying"),
    });
  }

  private get base() {
    return `/apis/work.karmada.io/v1alpha1/namespaces/${this.namespace}/works`;
  }

  readonly state: MemberObjects;

  private memberChanged(obj: KubeObject): void {
    const key = workKeyOf(obj);
    if (!key) return;
    const i = key.indexOf("/");
    if (key.slice(0, i) === this.namespace) this.enqueue(key.slice(i + 1));
  }

  enqueue(name: string): void {
    if (this.ac.signal.aborted) return;
    this.queue.add(name);
    this.pump();
  }

  private later(name: string, ms: number): void {
    clearTimeout(this.timers.get(name));
    const t = setTimeout(() => {
      this.timers.delete(name);
      this.enqueue(name);
    }, ms);
    t.unref();
    this.timers.set(name, t);
  }

  private pump(): void {
    while (this.running.size < this.d.concurrency && this.queue.length > 0) {
      const name = this.queue.get()!;
      const p = this.reconcile(name)
        .then((retryMs) => {
          if (retryMs) this.later(name, retryMs);
        })
        .catch((err) => {
          this.d.log.warn({ err, work: name }, "work reconcile failed; retrying");
          this.later(name, this.d.retryMs);
        })
        .finally(() => {
          this.running.delete(p);
          this.queue.done(name);
          this.pump();
        });
      this.running.add(p);
    }
  }

  private async write(path: string, body: Work): Promise<Work> {
    return this.d.gateway.request<Work>("PUT", path, body, this.ac.signal);
  }

  /** Brings one Work to its desired state; the result is when to try again (0: not needed). */
  async reconcile(name: string): Promise<number> {
    const path = `${this.base}/${encodeURIComponent(name)}`;
    let work = await this.d.gateway.get<Work>(path, this.ac.signal);
    if (!work) return 0;
    const finalizers = work.metadata.finalizers ?? [];
    try {
      if (work.metadata.deletionTimestamp) {
        if (!finalizers.includes(ExecutionControllerFinalizer)) return 0;
        try {
          await deleteWork(work, this.d.member, this.state);
        } catch (e) {
          if (retryable(e)) return this.d.retryMs;
          throw e;
        }
        await this.write(path, { ...work, metadata: { ...work.metadata, finalizers: finalizers.filter((f) => f !== ExecutionControllerFinalizer) } });
        return 0;
      }
      if (!finalizers.includes(ExecutionControllerFinalizer)) {
        work = await this.write(path, { ...work, metadata: { ...work.metadata, finalizers: [...finalizers, ExecutionControllerFinalizer] } });
      }
      const t = (this.d.now ?? (() => new Date()))();
      const gen = work.metadata.generation;
      const current = (work.status ?? {}) as WorkStatusJson;
      const suspended = isSuspended(work);
      let conditions = setCondition(current.conditions, dispatchingCondition(suspended, gen), t);
      let next: WorkStatusJson = { ...current, conditions };
      let retry = false;
      if (!suspended) {
        const r = await applyWork({ work, cluster: this.d.cluster, client: this.d.member, state: this.state, signal: this.ac.signal, previous: current.manifestStatuses ?? [], listWaitMs: this.d.listWaitMs ?? 10_000 });
        conditions = setCondition(conditions, appliedCondition(manifestsOf(work).length, r.errors, gen), t);
        next = { conditions, manifestStatuses: r.statuses };
        retry = r.retry;
        if (retry) this.d.log.debug({ work: name, errors: r.errors }, "applying to the member failed; retrying");
      }
      if (!sameWorkStatus(current, next)) await this.write(`${path}/status`, { ...work, status: next as Work["status"] });
      return retry ? this.d.retryMs : 0;
    } catch (e) {
      // a write raced with the binding controller's: read again at once
      if (isConflictError(e)) return 1;
      throw e;
    }
  }

  /** Lists the Works, queues each, and returns the list's resourceVersion. */
  private async list(): Promise<string> {
    const l = await this.d.gateway.request<{ metadata?: { resourceVersion?: string }; items: Work[] }>("GET", this.base, undefined, this.ac.signal);
    this.lists++;
    for (const w of l.items) this.enqueue(w.metadata.name ?? "");
    return l.metadata?.resourceVersion ?? "";
  }

  private async watchLoop(): Promise<void> {
    const signal = this.ac.signal;
    const backoff = this.d.backoff ?? { baseMs: 500, maxMs: 30_000 };
    let failures = 0;
    while (!signal.aborted) {
      let code: number | undefined;
      try {
        if (!this.resourceVersion) this.resourceVersion = await this.list();
        const q = new URLSearchParams({ watch: "true", resourceVersion: this.resourceVersion, timeoutSeconds: String(this.d.watchTimeoutSeconds) });
        const r = await this.d.gateway.watch(`${this.base}?${q}`, (e: WatchEvent) => this.onEvent(e, (c) => (code = c)), signal);
        code ??= r.code;
        failures = code === undefined ? 0 : failures + 1;
      } catch (err) {
        if (signal.aborted) break;
        failures++;
        this.d.log.debug({ err, failures }, err instanceof GatewayUnreachableError ? "gateway unreachable; watching again" : "works watch failed");
      }
      if (signal.aborted) break;
      const next = afterWatch({ resourceVersion: this.resourceVersion, code, failures }, backoff);
      if (next.action === "relist") {
        if (code === 410) this.d.log.info({ resourceVersion: this.resourceVersion }, "works watch expired (410 Gone); listing again");
        this.resourceVersion = "";
      }
      await sleep(next.delayMs, signal);
    }
  }

  private onEvent(e: WatchEvent, error: (code: number) => void): void {
    if (e.type === "ERROR") {
      error(e.object.code ?? 500);
      return;
    }
    const rv = e.object.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (e.type !== "BOOKMARK" && e.object.metadata?.name) this.enqueue(e.object.metadata.name);
  }

  start(): this {
    this.loops.push(this.watchLoop());
    if (this.d.resyncMs > 0) {
      this.resync = setInterval(() => {
        // every Work again: drift on the member, and anything a lost event left behind
        if (this.resourceVersion) this.list().catch((err) => this.d.log.debug({ err }, "works resync list failed"));
      }, this.d.resyncMs);
      this.resync.unref();
    }
    return this;
  }

  async stop(): Promise<void> {
    this.ac.abort();
    clearInterval(this.resync);
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.queue.clear();
    await Promise.allSettled([...this.loops, ...this.running]);
    await this.state.stop();
  }
}
