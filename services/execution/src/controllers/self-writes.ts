/**
 * The resourceVersions this service wrote, per key, so the wake-up its own write causes can be
 * acknowledged without another reconcile (the state is what the reconcile just made it).
 * Bounded: the oldest entries are forgotten first, which only costs an extra no-op reconcile.
 */
export class SelfWrites {
  private readonly rvs = new Map<string, string>();

  constructor(private readonly max = 200_000) {}

  record(key: string, rv: string | undefined): void {
    if (!rv) return;
    this.rvs.delete(key);
    this.rvs.set(key, rv);
    if (this.rvs.size > this.max) this.rvs.delete(this.rvs.keys().next().value!);
  }

  isOwn(key: string, rv: string | undefined): boolean {
    return !!rv && this.rvs.get(key) === rv;
  }

  forget(key: string): void {
    this.rvs.delete(key);
  }

  get size(): number {
    return this.rvs.size;
  }
}
