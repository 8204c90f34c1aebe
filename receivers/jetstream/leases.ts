/**
 * Partition leases in a JetStream key-value bucket, shared by the instances of one group.
 *
 * The bucket's TTL is the lease TTL: every key expires unless rewritten, so the server's clock
 * alone decides when a lease has lapsed. Keys:
 * - `members.<id>`: each live instance, rewritten every renewal;
 * - `partitions.<n>`: the id of the instance that owns partition n. It is taken with `create`
 *   (succeeds only when the key is absent, deleted or expired) and renewed with `update` at the
 *   revision last written, so two instances can never both hold it: the loser's write is refused.
 *
 * Renewal runs on its own: the held keys and the member key are rewritten every `ttl/4`, counted
 * from the previous renewal's send, in one round of concurrent writes. It never waits behind the
 * slower rest of the work, so on a busy event loop, where every round trip can take a second, a
 * lease is still rewritten long before the server expires it (a renewal done in the middle of
 * that work and scheduled after it ended left gaps beyond the TTL, and instances lost partitions
 * they were busy reading).
 *
 * Every `ttl/3` an instance also reads the members and owners and moves towards its fair share
 * (assignment.ts): it takes free partitions while below it and releases partitions while above
 * it — gracefully: the reader finishes and acknowledges what it has in flight before the key is
 * deleted, so the next owner starts where it stopped.
 *
 * A lease grant carries a fencing token: the revision of the key when it was taken. Revisions only
 * grow, so a later grant of a partition always has a larger token; the reader of a grant reads
 * through a consumer of its own named by it (partition-reader.ts).
 *
 * An owner fences itself: `holds(n, token)` is true only for the current grant and only until the
 * last successful renewal's send time plus 90% of the TTL, which is before the server can expire
 * the key, so a partitioned or paused instance stops pulling, forwarding and acknowledging before
 * anyone else can take over. That is all a late renewal does locally: the lease is given up only
 * when the server says so (a renewal refused because the key moved on), never because a local
 * timer fired late. A late renewal the server still accepted (at the revision last written, so
 * nobody took the key in between) makes `holds` true again, and `renewed(n)` tells the reader to
 * go on. Asking `holds` when a renewal is overdue (the timer is late on a busy event loop) sends
 * the renewal first, so a reader that wakes from a stall renews before it does anything else.
 *
 * So a stall shorter than the TTL minus a renewal period (`ttl/4`) and a round trip never loses a
 * lease: the renewal that was due during it reaches the server before the key expires.
 *
 * A request the connection lost is never answered: the client drops what it buffered while
 * disconnected when it reconnects, and a request in the socket of a server that went down is gone
 * with it. So a renewal's writes time out after `ttl/2` (RENEWAL_TIMEOUT_SHARE), not after the
 * client's default of 5 s, and `reconnected()` sends a renewal at once rather than after the one
 * lost with the old connection timed out: when one renewal waited 5 s for its answer, a nats-server
 * restart of 150 ms let every lease of a 3 s TTL lapse, and what the readers had forwarded after
 * the restart was read again by the next owners. A reconnection also fences every lease until a
 * renewal sent over the new connection succeeds, so nothing is forwarded after an outage under a
 * lease the server may have let expire meanwhile.
 */
import type { KV } from '@nats-io/kv';
import type { Log } from '../../lib/log.js';
import { errorText } from '../../lib/jetstream/connection.js';
import { acquisitionOrder, fairShare } from './assignment.js';

export interface LeaseKeeperOptions {
  readonly kv: KV;
  readonly memberId: string;
  readonly partitions: number;
  readonly ttlMs: number;
  readonly log: Log;
  /** A partition was acquired under the grant `token` (the key's revision): start reading it. */
  readonly acquire: (partition: number, token: number) => void;
  /** A partition is being given up: finish and acknowledge what is in flight, then resolve. */
  readonly release: (partition: number) => Promise<void>;
  /** The lease is gone (expired or taken): stop at once, acknowledging nothing more. */
  readonly lost: (partition: number) => void;
  /** Called after each change of the owned set. */
  readonly changed: (change: 'acquired' | 'released' | 'lost') => void;
  /** The lease of a partition was rewritten: `holds` may have turned true again. */
  readonly renewed?: (partition: number) => void;
}

interface Lease {
  /** The fencing token: the key's revision when it was taken. */
  readonly token: number;
  revision: number;
  /** performance.now() until which forwarding is safe. */
  validUntil: number;
  /** The release under way, whoever started it (a rebalancing tick or stop()). */
  releasing: Promise<void> | undefined;
}

const partitionKey = (n: number) => `partitions.${n}`;

/**
 * How long a renewal's write waits for its answer, as a share of the TTL: a renewal lost on the way
 * leaves time for the next to land before the key expires. An answer that waited out a longer
 * stall counts as a timeout; the next renewal, sent at once, finds the key still naming this
 * instance (`rewrite`).
 */
const RENEWAL_TIMEOUT_SHARE = 0.5;

export class LeaseKeeper {
  private readonly owned = new Map<number, Lease>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;
  /** Counts renewal rounds; a round started before a reconnection is no longer the current one. */
  private renewRound = 0;
  /** performance.now() at which the next renewal is due. */
  private renewDue = Number.POSITIVE_INFINITY;
  /** Set once every partition is released: renewal stops too. */
  private left = false;
  private stopped = false;
  private lastProblem = '';
  private renewProblem = '';

  constructor(private readonly options: LeaseKeeperOptions) {}

  get memberKey(): string {
    return `members.${this.options.memberId}`;
  }

  /**
   * Whether this instance may still pull, forward and acknowledge for the partition under the
   * grant `token` (any grant when not given). A renewal overdue is sent first.
   */
  holds(partition: number, token?: number): boolean {
    this.renewIfLate();
    const lease = this.owned.get(partition);
    return lease !== undefined && (token === undefined || lease.token === token) && performance.now() < lease.validUntil;
  }

  /** The fencing token of the partition's grant, while held. */
  tokenOf(partition: number): number | undefined {
    return this.owned.get(partition)?.token;
  }

  /** The partitions held now, ascending. */
  ownedPartitions(): number[] {
    return [...this.owned.keys()].sort((a, b) => a - b);
  }

  /** The last problem reaching the bucket, cleared by the next tick or renewal that works. */
  problem(): string {
    return this.lastProblem || this.renewProblem;
  }

  start(): void {
    const every = Math.max(50, Math.floor(this.options.ttlMs / 3));
    const loop = () => {
      if (this.stopped) return;
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined;
        if (!this.stopped) this.timer = setTimeout(loop, every);
      });
    };
    // The first renewal writes the member key, so the first look at the members counts this instance.
    this.renewLoop();
    void this.renewing?.then(loop);
  }

  /**
   * The connection came back. What was sent over the old one may be lost (a renewal among it would
   * keep the next from being sent until it timed out), and the server may have let keys expire
   * while it was away: every lease is fenced until a renewal sent now succeeds.
   */
  reconnected(): void {
    const now = performance.now();
    for (const lease of this.owned.values()) lease.validUntil = Math.min(lease.validUntil, now);
    if (this.left || this.renewDue === Number.POSITIVE_INFINITY) return;
    clearTimeout(this.renewTimer);
    this.renewLoop();
  }

  /** Releases every partition gracefully, then leaves the group. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    try {
      // Renewal goes on while readers drain: a slow drain must not let the leases lapse under them.
      await Promise.all(this.ownedPartitions().map((p) => this.release(p)));
    } finally {
      this.left = true;
      if (this.renewTimer) clearTimeout(this.renewTimer);
      await this.renewing;
    }
    await this.options.kv.delete(this.memberKey).catch(() => {});
  }

  /**
   * The ids in the member keys. Listing keys ends only when the server says nothing is pending
   * (a key that expires meanwhile can keep that from coming): a listing that takes longer than a
   * TTL is stopped and fails, or every later tick would wait behind it and the instance would
   * never take or release a partition again.
   */
  private async liveMembers(): Promise<string[]> {
    const keys = await this.options.kv.keys('members.*');
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      keys.stop();
    }, this.options.ttlMs);
    const members: string[] = [];
    try {
      for await (const key of keys) members.push(key.slice('members.'.length));
    } finally {
      clearTimeout(timer);
    }
    if (timedOut) throw new Error(`listing the members took longer than ${this.options.ttlMs} ms`);
    return members;
  }

  /**
   * Renews every `ttl/4`, counted from the previous renewal's send (a renewal slower than that is
   * followed by the next at once), one at a time: two writes at the same revision would make the
   * second fail and look like a lost lease. The one exception is a reconnection, which starts a
   * round at once while the old one may still be waiting; the old round's answers are then
   * ignored (see `renew`).
   */
  private renewLoop(): void {
    if (this.left) return;
    const every = Math.max(50, Math.floor(this.options.ttlMs / 4));
    const sentAt = performance.now();
    this.renewDue = sentAt + every;
    const round = ++this.renewRound;
    this.renewing = this.renew(round).finally(() => {
      // A round overtaken by a reconnection's leaves the schedule to that one.
      if (round !== this.renewRound) return;
      this.renewing = undefined;
      if (this.left) return;
      this.renewTimer = setTimeout(() => this.renewLoop(), Math.max(0, this.renewDue - performance.now()));
    });
  }

  /** Sends the renewal now if it is due and its timer has not fired yet (the event loop was held). */
  private renewIfLate(): void {
    if (this.renewing || this.left || performance.now() < this.renewDue) return;
    clearTimeout(this.renewTimer);
    this.renewLoop();
  }

  private async tick(): Promise<void> {
    const { kv, memberId, partitions } = this.options;
    try {
      const members = await this.liveMembers();
      const owners = await Promise.all(
        Array.from({ length: partitions }, async (_, p) => {
          const entry = await kv.get(partitionKey(p));
          return entry && entry.operation === 'PUT' ? { owner: entry.string(), revision: entry.revision } : undefined;
        }),
      );
      this.lastProblem = '';
      const target = fairShare(members, memberId, partitions);
      const active = [...this.owned].filter(([, lease]) => !lease.releasing).map(([p]) => p);
      if (active.length > target) {
        for (const p of active.sort((a, b) => b - a).slice(0, active.length - target)) void this.release(p);
        return;
      }
      let room = target - active.length;
      for (const p of acquisitionOrder(members, memberId, partitions)) {
        if (room <= 0 || this.stopped) break;
        if (this.owned.has(p)) continue;
        const current = owners[p];
        // A key still naming this instance (kept through a short disconnect) is taken back by
        // revision; anything else only when free.
        if (current && current.owner !== memberId) continue;
        const sentAt = performance.now();
        try {
          const revision = current
            ? await kv.update(partitionKey(p), memberId, current.revision)
            : await kv.create(partitionKey(p), memberId);
          if (this.stopped) {
            await kv.delete(partitionKey(p), { previousSeq: revision }).catch(() => {});
            break;
          }
          this.owned.set(p, { token: revision, revision, validUntil: sentAt + this.options.ttlMs * 0.9, releasing: undefined });
          room--;
          this.options.log('info', 'acquired partition', { partition: p, token: revision });
          this.options.acquire(p, revision);
          this.options.changed('acquired');
        } catch {
          // Another instance was faster: the key is not free any more.
        }
      }
    } catch (err) {
      const problem = `cannot reach the lease bucket: ${errorText(err)}`;
      if (problem !== this.lastProblem) this.options.log('warn', 'reading the lease bucket failed', { error: errorText(err) });
      this.lastProblem = problem;
    }
  }

  /**
   * Rewrites the member key and every held key at its last revision, all at once; a write the
   * server refuses because the key moved on means the lease is gone. The answers of a round that
   * is no longer the current one are ignored: the current round finds out for itself (a write of
   * the old round that still landed moved the revision on, which `rewrite` recognises). Never throws.
   */
  private async renew(round: number): Promise<void> {
    const { kv, ttlMs } = this.options;
    const sentAt = performance.now();
    let failure = '';
    await Promise.all([
      kv.put(this.memberKey, String(Date.now()), { timeout: this.renewalTimeoutMs() }).then(
        () => undefined,
        (err: unknown) => void (failure = errorText(err)),
      ),
      ...[...this.owned].map(async ([p, lease]) => {
        try {
          const revision = await this.rewrite(p, lease);
          if (round !== this.renewRound) return;
          lease.revision = revision;
          // A lease released meanwhile is not brought back to life (its revision still serves the delete).
          if (this.owned.get(p) !== lease) return;
          lease.validUntil = sentAt + ttlMs * 0.9;
          this.options.renewed?.(p);
        } catch (err) {
          if (round !== this.renewRound) return;
          if (/wrong last sequence/i.test(errorText(err))) this.lose(p, 'the lease was taken or expired');
          else failure = errorText(err);
        }
      }),
    ]);
    if (round !== this.renewRound) return;
    const problem = failure === '' ? '' : `cannot reach the lease bucket: ${failure}`;
    if (problem !== '' && problem !== this.renewProblem) this.options.log('warn', 'renewing leases failed', { error: failure });
    this.renewProblem = problem;
  }

  /**
   * Updates the key at the lease's revision. Refused, the key may still be this lease's: an
   * earlier update the server applied but whose answer was lost (timed out on a stalled event
   * loop) moved the revision on. Only this lease writes this instance's id into the key while it
   * is held, so a key naming this instance is the lease's, at the revision it shows.
   */
  private async rewrite(partition: number, lease: Lease): Promise<number> {
    const { kv, memberId } = this.options;
    try {
      return await kv.update(partitionKey(partition), memberId, lease.revision, this.renewalTimeoutMs());
    } catch (err) {
      if (!/wrong last sequence/i.test(errorText(err))) throw err;
      const entry = await kv.get(partitionKey(partition));
      if (entry?.operation !== 'PUT' || entry.string() !== memberId || entry.revision === lease.revision) throw err;
      return await kv.update(partitionKey(partition), memberId, entry.revision, this.renewalTimeoutMs());
    }
  }

  private renewalTimeoutMs(): number {
    return Math.max(50, Math.floor(this.options.ttlMs * RENEWAL_TIMEOUT_SHARE));
  }

  private lose(partition: number, why: string): void {
    if (!this.owned.delete(partition)) return;
    this.options.log('warn', 'lost partition', { partition, reason: why });
    this.options.lost(partition);
    this.options.changed('lost');
  }

  /**
   * Releases a partition once; a second call (stop() during a rebalancing tick's release) gets the
   * release under way, so whoever stops waits for its acknowledgements too.
   */
  private release(partition: number): Promise<void> {
    const lease = this.owned.get(partition);
    if (!lease) return Promise.resolve();
    lease.releasing ??= this.releaseOnce(partition, lease);
    return lease.releasing;
  }

  private async releaseOnce(partition: number, lease: Lease): Promise<void> {
    await this.options.release(partition);
    // The lease may have been lost while the reader drained; then there is nothing to delete.
    if (this.owned.get(partition) !== lease) return;
    this.owned.delete(partition);
    // A renewal in flight would move the revision on and make the delete below miss, leaving the
    // key to expire: the next owner would wait a whole TTL.
    await this.renewing;
    await this.options.kv.delete(partitionKey(partition), { previousSeq: lease.revision }).catch(() => {});
    this.options.log('info', 'released partition', { partition });
    this.options.changed('released');
  }
}
