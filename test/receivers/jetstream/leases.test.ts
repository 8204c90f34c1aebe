/**
 * LeaseKeeper on a fake bucket and fake timers: renewal keeps going however slow the rest of a
 * tick is, a late renewal the server accepted gives the lease back to the reader, a member
 * listing that never ends does not stop the instance from taking partitions, and a reconnection
 * renews at once.
 */
import type { KV } from '@nats-io/kv';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LeaseKeeper } from '../../../receivers/jetstream/leases.js';

const TTL = 6000;

/** A key-value bucket kept in memory; `delay` and `hangKeys` make its answers slow or endless. */
class FakeBucket {
  readonly keys = new Map<string, { value: string; revision: number }>();
  private revision = 0;
  /** Milliseconds before an update is answered. */
  updateDelay = 0;
  /** Milliseconds before a get is answered. */
  getDelay = 0;
  /** Listing keys never finishes (its iterator waits until stopped). */
  hangKeys = false;
  updates = 0;
  /** Updates asked for, answered or not yet. */
  updatesAsked = 0;
  /** The next update is applied, but its answer is lost (the client times out). */
  loseNextAnswer = false;
  /** Updates never reach the server and are never answered (sent into a connection that dropped). */
  dropUpdates = false;

  private later<T>(ms: number, answer: () => T): Promise<T> {
    return new Promise((resolve, reject) =>
      setTimeout(() => {
        try {
          resolve(answer());
        } catch (err) {
          reject(err);
        }
      }, ms),
    );
  }

  kv(): KV {
    const write = (key: string, value: string) => {
      this.keys.set(key, { value, revision: ++this.revision });
      return this.revision;
    };
    const bucket = {
      put: async (key: string, value: string) => write(key, value),
      create: async (key: string, value: string) => {
        if (this.keys.has(key)) throw new Error('wrong last sequence: 1');
        return write(key, value);
      },
      update: (key: string, value: string, revision: number) => {
        this.updatesAsked++;
        if (this.dropUpdates) return new Promise<number>(() => {});
        return this.later(this.updateDelay, () => {
          this.updates++;
          if (this.keys.get(key)?.revision !== revision) throw new Error(`wrong last sequence: ${this.keys.get(key)?.revision ?? 0}`);
          const written = write(key, value);
          if (this.loseNextAnswer) {
            this.loseNextAnswer = false;
            throw new Error('TIMEOUT');
          }
          return written;
        });
      },
      delete: async (key: string) => {
        this.keys.delete(key);
      },
      get: (key: string) =>
        this.later(this.getDelay, () => {
          const entry = this.keys.get(key);
          return entry ? { operation: 'PUT', revision: entry.revision, string: () => entry.value } : null;
        }),
      keys: async (filter: string) => {
        const prefix = filter.replace(/\*$/, '');
        const found = [...this.keys.keys()].filter((k) => k.startsWith(prefix));
        let stop!: () => void;
        const stopped = new Promise<void>((resolve) => (stop = resolve));
        const hang = this.hangKeys;
        return {
          stop,
          async *[Symbol.asyncIterator]() {
            yield* found;
            if (hang) await stopped;
          },
        };
      },
    };
    return bucket as unknown as KV;
  }
}

function keeper(bucket: FakeBucket, partitions: number, events: string[] = []) {
  return new LeaseKeeper({
    kv: bucket.kv(),
    memberId: 'me',
    partitions,
    ttlMs: TTL,
    log: () => {},
    acquire: (p) => events.push(`acquire ${p}`),
    release: async (p) => void events.push(`release ${p}`),
    lost: (p) => events.push(`lost ${p}`),
    changed: () => {},
    renewed: (p) => events.push(`renewed ${p}`),
  });
}

async function stopKeeper(k: LeaseKeeper): Promise<void> {
  const stopping = k.stop();
  await vi.advanceTimersByTimeAsync(3 * TTL);
  await stopping;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('LeaseKeeper', () => {
  it('renews held leases every ttl/4 however slow reading the members and owners is', async () => {
    const bucket = new FakeBucket();
    const events: string[] = [];
    const k = keeper(bucket, 2, events);
    k.start();
    await vi.advanceTimersByTimeAsync(10);
    expect(k.ownedPartitions()).toEqual([0, 1]);
    // Every later look at the owners takes two TTLs: a renewal done inside that work (as it was)
    // came too late and the server expired the keys.
    bucket.getDelay = 2 * TTL;
    for (let t = 0; t < 10 * TTL; t += 250) {
      await vi.advanceTimersByTimeAsync(250);
      expect([k.holds(0), k.holds(1)]).toEqual([true, true]);
    }
    expect(events.filter((e) => e.startsWith('lost'))).toEqual([]);
    // About one round of renewals (two keys) per ttl/4.
    expect(bucket.updates).toBeGreaterThanOrEqual(2 * 38);
    bucket.getDelay = 0;
    const stopping = k.stop();
    await vi.advanceTimersByTimeAsync(3 * TTL);
    await stopping;
  });

  it('gives a lease back to the reader when a renewal the server accepted comes after the fence', async () => {
    const bucket = new FakeBucket();
    const events: string[] = [];
    const k = keeper(bucket, 1, events);
    k.start();
    await vi.advanceTimersByTimeAsync(10);
    expect(k.holds(0)).toBe(true);
    // Each renewal is answered 0.8 TTL after it was sent: the fence (0.9 TTL after the previous
    // send) passes before the next answer comes, though the server never lets the key expire.
    bucket.updateDelay = TTL * 0.8;
    let lapsed = false;
    let heldAgain = false;
    for (let t = 0; t < 6 * TTL; t += 100) {
      await vi.advanceTimersByTimeAsync(100);
      if (!k.holds(0)) lapsed = true;
      else if (lapsed) heldAgain = true;
    }
    expect(lapsed).toBe(true);
    expect(heldAgain).toBe(true);
    expect(events).not.toContain('lost 0');
    // The reader is told each time, so it goes on forwarding and acknowledging.
    expect(events.filter((e) => e === 'renewed 0').length).toBeGreaterThan(3);
    bucket.updateDelay = 0;
    const stopping = k.stop();
    await vi.advanceTimersByTimeAsync(3 * TTL);
    await stopping;
  });

  it('stops a member listing that never ends, so later ticks still take free partitions', async () => {
    const bucket = new FakeBucket();
    const events: string[] = [];
    // Another member holds partition 1 for now.
    bucket.keys.set('members.other', { value: '1', revision: 100 });
    bucket.keys.set('partitions.1', { value: 'other', revision: 101 });
    const k = keeper(bucket, 2, events);
    bucket.hangKeys = true;
    k.start();
    await vi.advanceTimersByTimeAsync(3 * TTL);
    expect(k.problem()).toMatch(/listing the members took longer/);
    // The other member leaves: its partition is free, and this instance's share is both.
    bucket.keys.delete('members.other');
    bucket.keys.delete('partitions.1');
    bucket.hangKeys = false;
    await vi.advanceTimersByTimeAsync(2 * TTL);
    expect(k.ownedPartitions()).toEqual([0, 1]);
    const stopping = k.stop();
    await vi.advanceTimersByTimeAsync(3 * TTL);
    await stopping;
  });

  it('waits, when stopping, for a release a rebalancing tick started, so its acknowledgements go out first', async () => {
    const bucket = new FakeBucket();
    const events: string[] = [];
    let finishRelease: (() => void) | undefined;
    const k = new LeaseKeeper({
      kv: bucket.kv(),
      memberId: 'me',
      partitions: 2,
      ttlMs: TTL,
      log: () => {},
      acquire: (p) => events.push(`acquire ${p}`),
      // Partition 1's reader drains until told to (its acknowledgements wait for ack_delay).
      release: (p) => {
        events.push(`release ${p}`);
        return p === 1 ? new Promise<void>((resolve) => (finishRelease = resolve)) : Promise.resolve();
      },
      lost: (p) => events.push(`lost ${p}`),
      changed: () => {},
    });
    k.start();
    await vi.advanceTimersByTimeAsync(10);
    expect(k.ownedPartitions()).toEqual([0, 1]);
    // A second member joins: the next tick gives partition 1 up, and stop() comes while it drains.
    bucket.keys.set('members.other', { value: '1', revision: 100 });
    await vi.advanceTimersByTimeAsync(TTL / 3);
    expect(events).toEqual(['acquire 0', 'acquire 1', 'release 1']);
    let stopped = false;
    const stopping = k.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(TTL);
    // Stopped before that drain ended, the instance abandoned the reader and closed the
    // connection: what it had forwarded was never acknowledged and the next owner read it again.
    expect([stopped, events]).toEqual([false, ['acquire 0', 'acquire 1', 'release 1', 'release 0']]);
    finishRelease!();
    await vi.advanceTimersByTimeAsync(10);
    await stopping;
    expect([stopped, k.ownedPartitions(), bucket.keys.has('partitions.1')]).toEqual([true, [], false]);
  });

  it('loses no lease to a renewal answered after the fence: it stops forwarding until an answer comes in time', async () => {
    const bucket = new FakeBucket();
    const events: string[] = [];
    const k = keeper(bucket, 1, events);
    k.start();
    await vi.advanceTimersByTimeAsync(10);
    const token = k.tokenOf(0)!;
    expect(k.holds(0, token)).toBe(true);
    // A busy process: every renewal is answered 0.95 TTL after it was sent. The server took each
    // write at once, so the key never expired; the lease was given up all the same when the
    // answer came after 90% of the TTL, and the partition was read again from its floor.
    bucket.updateDelay = TTL * 0.95;
    let fenced = false;
    for (let t = 0; t < 4 * TTL; t += 100) {
      await vi.advanceTimersByTimeAsync(100);
      if (!k.holds(0, token)) fenced = true;
    }
    expect(fenced).toBe(true);
    bucket.updateDelay = 0;
    await vi.advanceTimersByTimeAsync(TTL);
    expect([events.filter((e) => e.startsWith('lost')), k.holds(0, token), k.tokenOf(0)]).toEqual([[], true, token]);
    // A grant that is not the current one is never held.
    expect(k.holds(0, token - 1)).toBe(false);
    await stopKeeper(k);
  });

  it('keeps a lease whose renewal the server applied but whose answer was lost', async () => {
    const bucket = new FakeBucket();
    const events: string[] = [];
    const k = keeper(bucket, 1, events);
    k.start();
    await vi.advanceTimersByTimeAsync(10);
    bucket.loseNextAnswer = true;
    await vi.advanceTimersByTimeAsync(2 * TTL);
    expect([events.filter((e) => e.startsWith('lost')), k.holds(0), bucket.keys.get('partitions.0')?.value]).toEqual([[], true, 'me']);
    await stopKeeper(k);
  });

  it('gives a lease up when the key moved on to another owner', async () => {
    const bucket = new FakeBucket();
    const events: string[] = [];
    const k = keeper(bucket, 1, events);
    k.start();
    await vi.advanceTimersByTimeAsync(10);
    bucket.keys.set('partitions.0', { value: 'other', revision: 500 });
    await vi.advanceTimersByTimeAsync(TTL / 2);
    expect([events.filter((e) => e.startsWith('lost')), k.holds(0)]).toEqual([['lost 0'], false]);
    await stopKeeper(k);
  });

  it('sends an overdue renewal first when asked whether the lease is held after the event loop was held', async () => {
    const bucket = new FakeBucket();
    const k = keeper(bucket, 1);
    k.start();
    await vi.advanceTimersByTimeAsync(10);
    const asked = bucket.updatesAsked;
    // The process stalls for 0.6 TTL: no timer fires, but the clock moves on.
    const now = performance.now();
    const stalled = vi.spyOn(performance, 'now').mockReturnValue(now + TTL * 0.6);
    expect(k.holds(0)).toBe(true);
    expect(bucket.updatesAsked).toBe(asked + 1);
    stalled.mockRestore();
    await stopKeeper(k);
  });

  it('fences its leases on a reconnection and renews at once, not after the renewal lost with the old connection', async () => {
    const bucket = new FakeBucket();
    const events: string[] = [];
    const k = keeper(bucket, 1, events);
    k.start();
    await vi.advanceTimersByTimeAsync(10);
    // The connection drops: the renewal sent meanwhile is never answered. Renewals went one at a
    // time, so the next waited for that one's timeout (5 s by default) and the lease lapsed.
    bucket.dropUpdates = true;
    await vi.advanceTimersByTimeAsync(TTL / 4 + 10);
    const asked = bucket.updatesAsked;
    bucket.dropUpdates = false;
    k.reconnected();
    // The server may have let the key expire while it was away: nothing is forwarded until it
    // answers a renewal sent over the new connection.
    const fenced = k.holds(0);
    await vi.advanceTimersByTimeAsync(1);
    expect([fenced, bucket.updatesAsked - asked, k.holds(0), events.filter((e) => e.startsWith('lost'))]).toEqual([false, 1, true, []]);
    // Renewal goes on every ttl/4 after it.
    await vi.advanceTimersByTimeAsync(TTL);
    expect(bucket.updatesAsked - asked).toBe(5);
    await stopKeeper(k);
  });
});
