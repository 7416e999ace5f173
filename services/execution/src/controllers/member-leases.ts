import type { Logger } from "@flotilla/log";
import { lockConnection, withTimeout, type Sql } from "@flotilla/store";
import { planLeases } from "../logic/shard.js";

/** Why this replica stopped acting on a member. */
export type ReleaseReason = "rebalance" | "lost" | "expired" | "gone" | "stop";

export interface MemberLeasesOptions {
  /** The service's pool: its connection settings are reused for the leases' own connection. */
  sql: Sql;
  /** This replica's name, unique among the live replicas. */
  replica: string;
  /** A lease (and a heartbeat) not renewed for this long is free for another replica. */
  leaseMs: number;
  /** Time between two rounds (heartbeat, rebalance, renewal). */
  renewMs: number;
  /** The member clusters that exist now. */
  members: () => string[];
  /** This replica now probes, watches and applies the member (`first`: taken at this replica's first round, as it starts). */
  onAcquired: (member: string, first: boolean) => void;
  /** This replica stopped acting on the member (it must not probe, watch or apply it any more). */
  onReleased: (member: string, why: ReleaseReason) => void;
  log: Logger;
  /** Monotonic milliseconds (tests may pass their own). */
  clock?: () => number;
}

export interface MemberLeaseStats {
  rounds: number;
  failedRounds: number;
  acquired: number;
  released: number;
  /** Live replicas seen at the last round. */
  live: number;
}

/**
 * The member clusters this execution replica owns, by lease in Postgres (`member_replicas`,
 * `member_leases`, migration 008). Every `renewMs` a round writes this replica's heartbeat,
 * reads the live replicas, hashes the members over them (`logic/shard.ts`), drains the members
 * another replica should own (stops acting on them; releases their leases a round later), and
 * takes or renews the leases of its own. A lease is taken only when it is free, already ours, or
 * its holder has not renewed it for its lease duration; the row lock makes two takers of one
 * lease wait for each other, so at most one holder is ever recorded.
 *
 * A replica acts on a member only while its lease is valid by its own clock: `leaseMs - renewMs`
 * after the moment it sent the last successful renewal. The database counts the lease from the
 * renewal's commit, which is later, so a replica cut off from Postgres (or too slow to renew)
 * has stopped acting on its members at least `renewMs` before any other replica may take them.
 * Only a process frozen longer than that (SIGSTOP, a swap storm) can overlap its successor, as
 * with the scheduler's leader election.
 */
export class MemberLeases {
  private readonly held = new Set<string>();
  private readonly draining = new Set<string>();
  private validUntil = 0;
  private readonly lockSql: Sql;
  private readonly clock: () => number;
  private timer?: NodeJS.Timeout;
  private expiry?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  /** Rounds that renewed the leases. */
  private renewed = 0;
  private wake?: () => void;
  readonly stats: MemberLeaseStats = { rounds: 0, failedRounds: 0, acquired: 0, released: 0, live: 0 };

  constructor(private readonly o: MemberLeasesOptions) {
    this.clock = o.clock ?? (() => performance.now());
    this.lockSql = lockConnection(o.sql, `flotilla-member-leases:${o.replica}`, () => {});
  }

  get replica(): string {
    return this.o.replica;
  }

  /** Whether this replica may act on the member now. */
  owns(member: string): boolean {
    return this.held.has(member) && this.clock() < this.validUntil;
  }

  /** The members this replica acts on now. */
  owned(): string[] {
    return this.clock() < this.validUntil ? [...this.held].sort() : [];
  }

  /** Runs the first round (so that a lone replica owns its members when this resolves), then one every `renewMs`. */
  async start(): Promise<void> {
    await this.round();
    this.running = this.loop();
  }

  /** Asks for a round now (a member was added, say) rather than at the next tick. */
  nudge(): void {
    this.wake?.();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, this.o.renewMs);
      });
      clearTimeout(this.timer);
      this.wake = undefined;
      if (this.stopped) return;
      await this.round();
    }
  }

  // (the lock connection does not fetch types, so lists of member names travel comma-separated: DNS labels hold no comma)
  private q<T>(p: Promise<T>): Promise<T> {
    return withTimeout(p, Math.max(500, Math.floor(this.o.leaseMs / 2)), "member lease statement");
  }

  private release(member: string, why: ReleaseReason): void {
    this.stats.released++;
    try {
      this.o.onReleased(member, why);
    } catch (e) {
      this.o.log.warn({ err: e, cluster: member }, "stopping work on a member failed");
    }
  }

  private async round(): Promise<void> {
    const t0 = this.clock();
    const me = this.o.replica;
    const leaseMs = Math.round(this.o.leaseMs);
    this.stats.rounds++;
    try {
      const liveRows = await this.q(this.lockSql<{ replica: string }[]>`
        WITH hb AS (
          INSERT INTO member_replicas (replica, heartbeat_at, lease_ms) VALUES (${me}, clock_timestamp(), ${leaseMs})
          ON CONFLICT (replica) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at, lease_ms = EXCLUDED.lease_ms
          RETURNING replica)
        SELECT replica FROM member_replicas
          WHERE replica <> ${me} AND heartbeat_at > clock_timestamp() - make_interval(secs => lease_ms / 1000.0)
        UNION ALL SELECT replica FROM hb`);
      if (this.stopped) return;
      const live = liveRows.map((r) => r.replica);
      this.stats.live = live.length;
      const plan = planLeases({ me, members: this.o.members(), live, held: this.held, draining: this.draining });

      // stop acting first; the database hears of it only a round later
      for (const m of plan.drain) {
        this.held.delete(m);
        this.draining.add(m);
        this.o.log.info({ cluster: m, replicas: live.length }, "member moves to another replica; stopped working on it");
        this.release(m, "rebalance");
      }
      if (plan.release.length) {
        for (const m of plan.release) {
          if (this.held.delete(m)) this.release(m, "gone");
        }
        await this.q(this.lockSql`
          UPDATE member_leases SET holder = NULL, transitions = transitions + 1
          WHERE holder = ${me} AND member IN (SELECT unnest(string_to_array(${plan.release.join(",")}::text, ',')))`);
        for (const m of plan.release) this.draining.delete(m);
        await this.q(this.lockSql`DELETE FROM member_leases WHERE holder IS NULL AND member IN (SELECT unnest(string_to_array(${plan.release.join(",")}::text, ',')))
          AND member NOT IN (SELECT unnest(string_to_array(${this.o.members().join(",")}::text, ',')))`);
      }

      const got = plan.acquire.length
        ? await this.q(this.lockSql<{ member: string }[]>`
            INSERT INTO member_leases (member, holder, renewed_at, lease_ms, acquired_at)
            SELECT m, ${me}, clock_timestamp(), ${leaseMs}, clock_timestamp() FROM unnest(string_to_array(${plan.acquire.join(",")}::text, ',')) AS t(m)
            ON CONFLICT (member) DO UPDATE SET
              holder = EXCLUDED.holder,
              renewed_at = EXCLUDED.renewed_at,
              lease_ms = EXCLUDED.lease_ms,
              acquired_at = CASE WHEN member_leases.holder = EXCLUDED.holder THEN member_leases.acquired_at ELSE EXCLUDED.acquired_at END,
              transitions = member_leases.transitions + CASE WHEN member_leases.holder = EXCLUDED.holder THEN 0 ELSE 1 END
            WHERE member_leases.holder = EXCLUDED.holder OR member_leases.holder IS NULL
               OR member_leases.renewed_at < clock_timestamp() - make_interval(secs => member_leases.lease_ms / 1000.0)
            RETURNING member`)
        : [];
      if (this.stopped) return;
      const now = new Set(got.map((r) => r.member));
      const wasValid = this.clock() < this.validUntil;
      for (const m of [...this.held]) {
        if (now.has(m)) continue;
        this.held.delete(m);
        this.o.log.warn({ cluster: m }, "member lease lost to another replica; stopped working on it");
        this.release(m, "lost");
      }
      // valid from the moment the renewal was sent, not from when its answer came
      this.validUntil = t0 + this.o.leaseMs - this.o.renewMs;
      this.armExpiry();
      const first = this.renewed === 0;
      this.renewed++;
      for (const m of [...now].sort()) {
        this.draining.delete(m);
        if (this.held.has(m) && wasValid) continue;
        this.held.add(m);
        this.stats.acquired++;
        this.o.log.info({ cluster: m, replicas: live.length }, "member lease taken; working on it");
        this.o.onAcquired(m, first);
      }
    } catch (e) {
      this.stats.failedRounds++;
      this.o.log.warn({ err: e, held: this.held.size }, "member leases not renewed; retrying");
    }
  }

  /** At the end of the leases' validity, unless a round renewed them, stop acting on every member. */
  private armExpiry(): void {
    clearTimeout(this.expiry);
    const wait = Math.max(0, this.validUntil - this.clock());
    this.expiry = setTimeout(() => {
      if (this.clock() < this.validUntil) return this.armExpiry();
      if (this.held.size) this.o.log.warn({ members: this.held.size }, "member leases expired before they could be renewed; stopped working on their members");
      for (const m of [...this.held]) {
        this.held.delete(m);
        this.release(m, "expired");
      }
    }, wait + 1);
    this.expiry.unref?.();
  }

  /** Stops the rounds, stops acting on every member, then gives the leases up and removes the heartbeat so the others take over at once. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.wake?.();
    await this.running;
    clearTimeout(this.expiry);
    for (const m of [...this.held]) {
      this.held.delete(m);
      this.release(m, "stop");
    }
    this.draining.clear();
    this.validUntil = 0;
    try {
      await this.q(this.lockSql`UPDATE member_leases SET holder = NULL, transitions = transitions + 1 WHERE holder = ${this.o.replica}`);
      await this.q(this.lockSql`DELETE FROM member_replicas WHERE replica = ${this.o.replica}`);
    } catch (e) {
      this.o.log.warn({ err: e }, "member leases not released; they expire by themselves");
    }
    await this.lockSql.end({ timeout: 1 }).catch(() => {});
  }
}
