/**
 * The bindings parked as Unschedulable on this replica: retried when any cluster changes in a way
 * that may free capacity or let them fit, and when the assumed ledger lets go of load (besides
 * their own retry timer). Losing it changes no outcome; the timer retries them anyway.
 *
 * Every drain starts a new epoch. A decision notes the epoch before it reads the clusters and the
 * ledger; if a drain came while it was deciding, the change that caused it may not be in what it
 * decided on, and the binding is not parked but retried at once (`park` says so).
 */
export class BindingTracker {
  private readonly unschedulable = new Set<string>();
  private drains = 0;

  /** The current epoch: note it before deciding, hand it to `park`. */
  get epoch(): number {
    return this.drains;
  }

  /**
   * Parks the key, unless a drain happened since `epoch` (a change the decision may have missed):
   * then it is not parked and false is returned, and the caller retries it at once.
   */
  park(key: string, epoch = this.drains): boolean {
    if (epoch !== this.drains) {
      this.unschedulable.delete(key);
      return false;
    }
    this.unschedulable.add(key);
    return true;
  }

  unpark(key: string): void {
    this.unschedulable.delete(key);
  }

  /** Takes every parked key (they are re-parked if still unschedulable) and starts a new epoch. */
  drainParked(): string[] {
    this.drains++;
    const keys = [...this.unschedulable];
    this.unschedulable.clear();
    return keys;
  }

  get parked(): number {
    return this.unschedulable.size;
  }
}
