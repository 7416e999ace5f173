import type { TargetCluster } from "@flotilla/api";
import { fnv1a32 } from "./hash.js";

/** One party of a Webster (Sainte-Laguë) apportionment: a cluster, its weight and its replicas. */
export interface Party {
  name: string;
  votes: number;
  seats: number;
}

/** Returns true when `a` should win a tie against `b`. */
export type TieBreaker = (a: Party, b: Party) => boolean;

/**
 * The tie-breaker the scheduler uses: fewer seats first, then name ascending when the UID is
 * empty or hashes (FNV-1a 32) to an even number, descending when it hashes to an odd one.
 */
export function uidTieBreaker(uid: string | undefined): TieBreaker {
  const ascending = !uid || fnv1a32(uid) % 2 === 0;
  return ascending
    ? (a, b) => (a.seats !== b.seats ? a.seats < b.seats : a.name < b.name)
    : (a, b) => (a.seats !== b.seats ? a.seats < b.seats : a.name > b.name);
}

const defaultTieBreaker: TieBreaker = (a, b) => (a.seats !== b.seats ? a.seats < b.seats : a.name < b.name);

/**
 * Allocates `newSeats` seats one by one to the party with the highest `votes / (2·seats + 1)`.
 * Parties listed only in `initial` take part with 0 votes; initial seats count in the divisor.
 * The result holds every party, sorted by name.
 */
export function allocateWebsterSeats(
  newSeats: number,
  votes: Iterable<readonly [string, number]>,
  initial?: Iterable<readonly [string, number]>,
  tieBreaker: TieBreaker = defaultTieBreaker,
): Party[] {
  const byName = new Map<string, Party>();
  if (initial) for (const [name, seats] of initial) byName.set(name, { name, votes: 0, seats });
  for (const [name, v] of votes) {
    const p = byName.get(name);
    if (p) p.votes = v;
    else byName.set(name, { name, votes: v, seats: 0 });
  }
  const heap = [...byName.values()];
  if (heap.length === 0) return heap;
  const n = heap.length;
  for (let i = (n >> 1) - 1; i >= 0; i--) siftDown(heap, i, tieBreaker);
  for (let s = 0; s < newSeats; s++) {
    heap[0].seats++;
    siftDown(heap, 0, tieBreaker);
  }
  return heap.sort(byPartyName);
}

function byPartyName(a: Party, b: Party): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Whether `a` gets the next seat before `b`: higher priority, then the tie-breaker. */
function before(a: Party, b: Party, tieBreaker: TieBreaker): boolean {
  const pa = a.votes / (2 * a.seats + 1);
  const pb = b.votes / (2 * b.seats + 1);
  return pa === pb ? tieBreaker(a, b) : pa > pb;
}

function siftDown(heap: Party[], i: number, tieBreaker: TieBreaker): void {
  const n = heap.length;
  const item = heap[i];
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) break;
    const r = l + 1;
    const c = r < n && before(heap[r], heap[l], tieBreaker) ? r : l;
    if (!before(heap[c], item, tieBreaker)) break;
    heap[i] = heap[c];
    i = c;
  }
  heap[i] = item;
}

/**
 * Splits `replicas` by the weights (Webster), from no seats. The result is sorted by name and
 * includes clusters that end with 0 replicas.
 */
export function divideByWeights(
  replicas: number,
  weights: ReadonlyArray<{ readonly name: string; readonly weight: number }>,
  tieBreaker: TieBreaker,
): TargetCluster[] {
  const parties = allocateWebsterSeats(
    replicas,
    weights.map((w) => [w.name, w.weight] as const),
    undefined,
    tieBreaker,
  );
  return parties.map((p) => ({ name: p.name, replicas: p.seats }));
}

/**
 * `added` on top of `base` (Karmada's MergeTargetClusters): replicas of the same cluster are
 * summed; clusters of `base` come first in their order, then the new ones of `added`.
 */
export function addTargetClusters(base: readonly TargetCluster[], added: readonly TargetCluster[]): TargetCluster[] {
  const out = base.map((t) => ({ name: t.name, replicas: t.replicas ?? 0 }));
  const index = new Map(out.map((t, i) => [t.name ?? "", i]));
  for (const t of added) {
    const i = index.get(t.name ?? "");
    if (i !== undefined) out[i].replicas += t.replicas ?? 0;
    else {
      index.set(t.name ?? "", out.length);
      out.push({ name: t.name, replicas: t.replicas ?? 0 });
    }
  }
  return out;
}
