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
 * Every `ttl/3` an instance renews its keys, reads the members and owners, and moves towards its
 * fair share (assignment.ts): it takes free partitions while below it and releases partitions
 * while above it — gracefully: the reader finishes and acknowledges what it has in flight before
 * the key is deleted, so the next owner starts where it stopped.
 *
 * An owner fences itself: `holds(n)` is true only until the last successful renewal's send time
 * plus 90% of the TTL, which is before the server can expire the key, so a partitioned or paused
 * instance stops forwarding before anyone else can take over.
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
  /** A partition was acquired: start reading it. */
  readonly acquire: (partition: number) => void;
  /** A partition is being given up: finish and acknowledge what is in flight, then resolve. */
  readonly release: (partition: number) => Promise<void>;
  /** The lease is gone (expired or taken): stop at once, acknowledging nothing more. */
  readonly lost: (partition: number) => void;
  /** Called after each change of the owned set. */
  readonly changed: (change: 'acquired' | 'released' | 'lost') => void;
}

interface Lease {
  revision: number;
  /** performance.now() until which forwarding is safe. */
  validUntil: number;
  releasing: boolean;
}

const partitionKey = (n: number) => `partitions.${n}`;

export class LeaseKeeper {
  private readonly owned = new Map<number, Lease>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  private lastProblem = '';

  constructor(private readonly options: LeaseKeeperOptions) {}

  get memberKey(): string {
    return `members.${this.options.memberId}`;
  }

  /** Whether this instance may still forward and acknowledge for the partition. */
  holds(partition: number): boolean {
    const lease = this.owned.get(partition);
    return lease !== undefined && performance.now() < lease.validUntil;
  }

  /** The partitions held now, ascending. */
  ownedPartitions(): number[] {
    return [...this.owned.keys()].sort((a, b) => a - b);
  }

  /** The last problem reaching the bucket, cleared by the next tick that works. */
  problem(): string {
    return this.lastProblem;
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
    loop();
  }

  /** Releases every partition gracefully, then leaves the group. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    // Keep renewing while readers drain: a slow drain must not let the leases lapse under them.
    const keepAlive = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.options.ttlMs / 3)));
    try {
      await Promise.all(this.ownedPartitions().map((p) => this.release(p)));
    } finally {
      clearInterval(keepAlive);
    }
    await this.options.kv.delete(this.memberKey).catch(() => {});
  }

  private async tick(): Promise<void> {
    const { kv, memberId, partitions } = this.options;
    try {
      await kv.put(this.memberKey, String(Date.now()));
      await this.renew();
      const members: string[] = [];
      for await (const key of await kv.keys('members.*')) members.push(key.slice('members.'.length));
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
          this.owned.set(p, { revision, validUntil: sentAt + this.options.ttlMs * 0.9, releasing: false });
          room--;
          this.options.log('info', 'acquired partition', { partition: p });
          this.options.acquire(p);
          this.options.changed('acquired');
        } catch {
          // Another instance was faster: the key is not free any more.
        }
      }
    } catch (err) {
      const problem = `cannot reach the lease bucket: ${errorText(err)}`;
      if (problem !== this.lastProblem) this.options.log('warn', 'renewing leases failed', { error: errorText(err) });
      this.lastProblem = problem;
      this.expireUnrenewed();
    }
  }

  /** Rewrites every held key at its last revision; a refused write means the lease is gone. */
  private async renew(): Promise<void> {
    const { kv, memberId, ttlMs } = this.options;
    const sentAt = performance.now();
    await Promise.all(
      [...this.owned].map(async ([p, lease]) => {
        try {
          lease.revision = await kv.update(partitionKey(p), memberId, lease.revision);
          lease.validUntil = sentAt + ttlMs * 0.9;
        } catch (err) {
          if (/wrong last sequence/i.test(errorText(err))) this.lose(p, 'the lease was taken or expired');
        }
      }),
    );
    this.expireUnrenewed();
  }

  private expireUnrenewed(): void {
    const now = performance.now();
    for (const [p, lease] of this.owned) if (now >= lease.validUntil) this.lose(p, 'the lease could not be renewed in time');
  }

  private lose(partition: number, why: string): void {
    if (!this.owned.delete(partition)) return;
    this.options.log('warn', 'lost partition', { partition, reason: why });
    this.options.lost(partition);
    this.options.changed('lost');
  }

  private async release(partition: number): Promise<void> {
    const lease = this.owned.get(partition);
    if (!lease || lease.releasing) return;
    lease.releasing = true;
    await this.options.release(partition);
    // The lease may have been lost while the reader drained; then there is nothing to delete.
    if (this.owned.get(partition) !== lease) return;
    this.owned.delete(partition);
    await this.options.kv.delete(partitionKey(partition), { previousSeq: lease.revision }).catch(() => {});
    this.options.log('info', 'released partition', { partition });
    this.options.changed('released');
  }
}
