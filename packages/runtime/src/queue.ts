/**
 * The work queue of one controller, with client-go workqueue semantics: a key is queued at
 * most once; a key being processed is never handed out again until `done`, and if it was
 * added meanwhile (dirty) it is queued again then.
 */
export class WorkQueue {
  private items: string[] = [];
  private head = 0;
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();

  /** Marks the key as needing work. Returns true when it was queued now. */
  add(key: string): boolean {
    if (this.dirty.has(key)) return false;
    this.dirty.add(key);
    if (this.processing.has(key)) return false;
    this.items.push(key);
    return true;
  }

  /** The next key to process (now in processing), or undefined when none is ready. */
  get(): string | undefined {
    if (this.head >= this.items.length) return undefined;
    const key = this.items[this.head++];
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    this.dirty.delete(key);
    this.processing.add(key);
    return key;
  }

  /** Processing finished. Returns true when the key was re-queued because it was added meanwhile. */
  done(key: string): boolean {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.items.push(key);
      return true;
    }
    return false;
  }

  /** Keys waiting to be processed. */
  get length(): number {
    return this.items.length - this.head;
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
    this.items = [];
    this.head = 0;
    this.dirty.clear();
  }
}
