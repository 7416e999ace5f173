/**
 * The bindings parked as Unschedulable on this replica: retried when any cluster changes that
 * may free capacity (besides their own retry timer). Losing it changes no outcome; the timer
 * retries them anyway.
 */
export class BindingTracker {
  private readonly unschedulable = new Set<string>();

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
