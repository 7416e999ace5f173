/**
 * Shares of a fleet-wide limit (a rate, or a cap on what is held open), as each replica
 * computes its own from the live leases of the limit (`limit_leases`, packages/store's
 * `FleetShares`): the rows every holder renews every few seconds with its demand over the last
 * period and, for a cap, what it holds open now.
 */
export interface LimitHolder {
  holder: string;
  /** A rate: what the holder was asked over its last period (granted or refused). A cap: what it holds open plus what it refused. */
  demand: number;
  /** A cap: what the holder holds open (0 for a rate). */
  used: number;
}

/** Sorted by name, with `me` added (its own numbers) when the snapshot does not have it yet. */
function withMe(me: LimitHolder, holders: readonly LimitHolder[]): LimitHolder[] {
  const out = holders.filter((h) => h.holder !== me.holder);
  out.push(me);
  return out.sort((a, b) => (a.holder < b.holder ? -1 : a.holder > b.holder ? 1 : 0));
}

const clean = (n: number) => (Number.isFinite(n) && n > 0 ? n : 0);

/**
 * This holder's share of a rate of `total` per second: in proportion to demand, each holder's
 * counted one higher than it was (so a holder that was asked nothing still gets a little, and
 * with no demand anywhere the rate is split evenly). The shares of one snapshot add up to
 * `total` exactly; shares taken from snapshots of different moments (every replica renews on
 * its own clock) differ from that only while the demands move.
 */
export function rateShare(total: number, me: LimitHolder, holders: readonly LimitHolder[]): number {
  if (!(total > 0)) return 0;
  if (total === Infinity) return Infinity;
  const all = withMe(me, holders);
  const w = (h: LimitHolder) => clean(h.demand) + 1;
  const sum = all.reduce((s, h) => s + w(h), 0);
  return (total * w(all.find((h) => h.holder === me.holder)!)) / sum;
}

/**
 * This holder's share of a cap of `total` (open watches): what every holder holds open stays
 * its own (nothing is taken back), and what is free goes to the holders that want more than they
 * hold (demand above used: what they were refused lately; the caller counts its own ask of the
 * moment in its demand), in proportion to that; when none does, it is divided evenly. Whole
 * units by largest remainder (ties by holder name, so every replica divides one snapshot alike).
 * The shares of one snapshot add up to `total` (more only when the holders hold more than it
 * already); two holders that each want one more in the same period both see it free.
 */
export function countShare(total: number, me: LimitHolder, holders: readonly LimitHolder[]): number {
  if (total === Infinity) return Infinity;
  const all = withMe(me, holders);
  const used = (h: LimitHolder) => Math.floor(clean(h.used));
  const free = Math.max(0, Math.floor(clean(total)) - all.reduce((s, h) => s + used(h), 0));
  const wanting = all.some((h) => clean(h.demand) > used(h));
  const want = (h: LimitHolder) => (wanting ? Math.max(0, clean(h.demand) - used(h)) : 1);
  const sum = all.reduce((s, h) => s + want(h), 0);
  const exact = all.map((h) => (free * want(h)) / sum);
  const whole = exact.map((x) => Math.floor(x));
  let left = free - whole.reduce((s, x) => s + x, 0);
  const order = exact.map((x, i) => ({ i, r: x - Math.floor(x) })).sort((a, b) => b.r - a.r || a.i - b.i);
  for (const { i, r } of order) {
    if (left <= 0 || r <= 0) break;
    whole[i]!++;
    left--;
  }
  const i = all.findIndex((h) => h.holder === me.holder);
  return used(all[i]!) + whole[i]!;
}
