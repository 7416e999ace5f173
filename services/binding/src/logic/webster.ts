import { fnv1a32 } from "@flotilla/api";

export interface Seats {
  name: string;
  votes: number;
  seats: number;
}

/**
 * Webster (Sainte-Laguë) apportionment as `helper.SpreadReplicasByTargetClusters` does it:
 * each seat goes to the party with the highest votes/(2·seats+1); ties go to fewer seats,
 * then to the name ascending when the UID is empty or hashes (FNV-1a 32) even, descending
 * when it hashes odd. Returns every party sorted by name.
 */
export function websterSeats(seats: number, votes: ReadonlyArray<readonly [string, number]>, uid = ""): Seats[] {
  const parties: Seats[] = votes.map(([name, v]) => ({ name, votes: v, seats: 0 }));
  if (parties.length === 0) return parties;
  const ascending = !uid || fnv1a32(uid) % 2 === 0;
  const before = (a: Seats, b: Seats): boolean => {
    // a before b: higher priority; compare votes_a/(2sa+1) vs votes_b/(2sb+1) by cross-multiplying
    const l = a.votes * (2 * b.seats + 1);
    const r = b.votes * (2 * a.seats + 1);
    if (l !== r) return l > r;
    if (a.seats !== b.seats) return a.seats < b.seats;
    return ascending ? a.name < b.name : a.name > b.name;
  };
  for (let s = 0; s < seats; s++) {
    let best = parties[0]!;
    for (const p of parties) if (before(p, best)) best = p;
    best.seats++;
  }
  return parties.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
