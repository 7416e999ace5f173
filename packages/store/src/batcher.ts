export interface BatcherOptions {
  /** Items sent together at most. */
  maxBatch: number;
  /** Batches running at once; further items wait and go out together when one finishes. */
  maxInFlight: number;
}

interface Pending<I, O> {
  item: I;
  resolve(o: O): void;
  reject(e: unknown): void;
}

/**
 * Group commit for independent requests: what callers submit while earlier batches are still
 * running goes out together in one batch. Alone, an item leaves at once (the end of the current
 * event-loop turn, so items submitted together in one turn share a batch), so light load pays
 * no latency and heavy load pays one round trip for many. `run` answers each item in order; an
 * item's own failure is its answer (resolve with an error value, or reject the whole batch and
 * let `retryAlone` decide per item).
 */
export class Batcher<I, O> {
  private queue: Pending<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly o: BatcherOptions,
    /** After a batch of several fails as a whole, each item is tried alone with this (default: the failure is every item's). */
    private readonly retryAlone?: (item: I) => Promise<O>,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  /** Items waiting for a batch slot. */
  get waiting(): number {
    return this.queue.length;
  }

  private pump(): void {
    while (this.inFlight < this.o.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.length <= this.o.maxBatch ? this.queue : this.queue.slice(0, this.o.maxBatch);
      this.queue = batch === this.queue ? [] : this.queue.slice(batch.length);
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async send(batch: Pending<I, O>[]): Promise<void> {
    let out: O[];
    try {
      out = await this.run(batch.map((p) => p.item));
    } catch (e) {
      if (batch.length === 1 || !this.retryAlone) {
        for (const p of batch) p.reject(e);
        return;
      }
      // one bad item must not fail the others: each goes again on its own
      await Promise.all(batch.map((p) => this.retryAlone!(p.item).then(p.resolve, p.reject)));
      return;
    }
    for (let i = 0; i < batch.length; i++) batch[i].resolve(out[i]);
  }
}
