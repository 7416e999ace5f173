/**
 * Which execution replica owns which member cluster: rendezvous (highest random weight) hashing
 * of each member over the live replicas. Every replica computes the same answer from the same
 * live set, and a replica joining or leaving moves only the members it wins or held (about 1/n
 * of them), so a rebalance touches as few members as it can.
 */

/** 32-bit FNV-1a, then a murmur3 finalizer so that close inputs spread over the whole range. */
function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The weight of `replica` for `member`; the highest weight owns it. */
export function weight(member: string, replica: string): number {
  return hash32(`${replica}\u0000${member}`);
}

/** The replica that owns `member` among `replicas` (undefined when there is none). Ties go to the smaller name. */
export function ownerOf(member: string, replicas: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestW = -1;
  for (const r of replicas) {
    const w = weight(member, r);
    if (w > bestW || (w === bestW && best !== undefined && r < best)) {
      best = r;
      bestW = w;
    }
  }
  return best;
}

/** Every member grouped by its owner (replicas that own none map to an empty list). */
export function assign(members: readonly string[], replicas: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>(replicas.map((r) => [r, []]));
  for (const m of members) {
    const o = ownerOf(m, replicas);
    if (o !== undefined) out.get(o)!.push(m);
  }
  return out;
}

export interface LeaseState {
  /** This replica. */
  me: string;
  /** Every member cluster that exists. */
  members: readonly string[];
  /** Replicas whose heartbeat is current (this one included once it has written its own). */
  live: readonly string[];
  /** Members this replica holds the lease of and acts on. */
  held: ReadonlySet<string>;
  /** Members this replica still holds the lease of but stopped acting on at the last round. */
  draining: ReadonlySet<string>;
}

export interface LeasePlan {
  /** Members to take or keep: the lease is taken when free or expired, renewed when ours. */
  acquire: string[];
  /** Members to stop acting on now; their leases are released at the next round. */
  drain: string[];
  /** Leases to give up now (drained at the previous round, or their member is gone). */
  release: string[];
}

/**
 * One round of a replica's leases. A member another replica should own is first drained (this
 * replica stops probing, watching and applying it) and released only a round later, so the work
 * started before the drain has finished when the next owner takes it. A drained member that
 * comes back to this replica is simply taken again.
 */
export function planLeases(s: LeaseState): LeasePlan {
  const live = s.live.includes(s.me) ? s.live : [...s.live, s.me];
  const exists = new Set(s.members);
  const mine = s.members.filter((m) => ownerOf(m, live) === s.me).sort();
  const mineSet = new Set(mine);
  const drain = [...s.held].filter((m) => !mineSet.has(m) && exists.has(m)).sort();
  const release = [...new Set([...[...s.draining].filter((m) => !mineSet.has(m)), ...[...s.held].filter((m) => !exists.has(m))])].sort();
  return { acquire: mine, drain, release };
}
