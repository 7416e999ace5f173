import { compareRv } from "../logic/keys.js";

/**
 * What this replica remembers between reconciles, only to save work (losing it changes no
 * outcome): the newest resourceVersion of each binding it has fully reconciled, so a wake-up
 * about that state (typically its own write coming back) is acked without a re-read; and the
 * bindings parked as Unschedulable, retried when any cluster changes.
 */
export class BindingTracker {
  private readonly reconciled = new Map<string, string>();
  private readonly unschedulable = new Set<string>();

  constructor(private readonly maxEntries = 200_000) {}

  /** The binding was reconciled as of `rv` (read or written by the reconcile). */
  reconciledAt(key: string, rv: string | undefined): void {
    if (!rv) return;
    const cur = this.reconciled.get(key);
    if (cur !== undefined && compareRv(cur, rv) >= 0) return;
    if (this.reconciled.size >= this.maxEntries) this.reconciled.clear();
    this.reconciled.set(key, rv);
  }

  /** A wake-up about `rv` needs no reconcile when a state at least that new was reconciled here. */
  isReconciled(key: string, rv: string | undefined): boolean {
    if (!rv) return false;
    const cur = this.reconciled.get(key);
    return cur !== undefined && compareRv(rv, cur) <= 0;
  }

  forget(key: string): void {
    this.reconciled.delete(key);
    this.unschedulable.delete(key);
  }

  park(key: string): void {
    this.unschedulable.add(key);
  }

  unpark(key: string): void {
    this.unschedulable.delete(key);
  }

  /** Takes every parked key (they are re-parked if still unschedulable). */
  drainParked(): string[] {
    const keys = [...this.unschedulable];
    this.unschedulable.clear();
    return keys;
  }

  get parked(): number {
    return this.unschedulable.size;
  }
}
