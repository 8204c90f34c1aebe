/**
 * PartitionReader against a fake consumer: where a re-created consumer starts, that a lease which
 * lapsed for a moment does not stop acknowledging for good, and that a new session waits for the
 * previous one's batches.
 */
import { JetStreamApiCodes, JetStreamApiError, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import type { Entry } from '../../../core/entry.js';
import { encodeEntryBatch, type WireEntry } from '../../../lib/jetstream/entry-codec.js';
import { jetStreamSourceMetrics } from '../../../receivers/jetstream/metrics.js';
import { MAX_FORWARDING_ENTRIES, PartitionReader, type PartitionReaderOptions } from '../../../receivers/jetstream/partition-reader.js';

interface FakeMessage {
  readonly seq: number;
  readonly data: Uint8Array;
  readonly acked: () => boolean;
  readonly naked: () => boolean;
  /** The reason given with the termination ('' for a bare one), undefined if not terminated. */
  readonly terminated: () => string | undefined;
}

/** A stream with one durable consumer; `deliver` hands messages to the reader's callback. */
function fakeJetStream(info: { ackFloor: number; optStartSeq?: number } | undefined) {
  const added: Array<{ opt_start_seq?: number }> = [];
  let callback: ((m: JsMsg) => void) | undefined;
  const jsm = {
    consumers: {
      info: async () => {
        if (!info)
          throw new JetStreamApiError({ err_code: JetStreamApiCodes.ConsumerNotFound, code: 404, description: 'consumer not found' });
        return { ack_floor: { stream_seq: info.ackFloor }, config: { opt_start_seq: info.optStartSeq } };
      },
      // The partition's one consumer of before, as the server lists it (the name every owner shared).
      list: async () =>
        info ? [{ name: 'g-0', ack_floor: { stream_seq: info.ackFloor }, config: { opt_start_seq: info.optStartSeq } }] : [],
      delete: async () => true,
      add: async (_stream: string, config: { opt_start_seq?: number }) => {
        added.push(config);
        return {};
      },
    },
  };
  // Messages delivered wait here until a fetch takes them.
  const queue: JsMsg[] = [];
  let wake: (() => void) | undefined;
  const fetches: Array<{ max_messages: number }> = [];
  /** Errors the next fetches throw, in order. */
  const failures: Error[] = [];
  /** Ends the open fetch as the server does when it expires. */
  let endFetch = async () => {};
  const js = {
    consumers: {
      get: async () => ({
        fetch: async (opts: { max_messages: number }) => {
          fetches.push(opts);
          const failure = failures.shift();
          if (failure) throw failure;
          let closed = false;
          endFetch = async () => {
            closed = true;
            wake?.();
          };
          return {
            close: async () => {
              closed = true;
              wake?.();
            },
            // As the server: a fetch ends once it delivered max_messages.
            async *[Symbol.asyncIterator]() {
              for (let n = 0; n < opts.max_messages && !closed; ) {
                const message = queue.shift();
                if (!message) await new Promise<void>((resolve) => (wake = resolve));
                else {
                  n++;
                  yield message;
                }
              }
            },
          };
        },
      }),
    },
  };
  callback = (m) => {
    queue.push(m);
    wake?.();
  };
  /** The highest message acknowledged: with ack policy `all`, every message up to it is. */
  let ackedThrough = 0;
  /** How many acknowledgements the reader sent, and how many of them the server was asked to confirm. */
  let acks = 0;
  let confirmedAcks = 0;
  const ackThrough = (seq: number) => {
    acks++;
    ackedThrough = Math.max(ackedThrough, seq);
  };
  /** One message of one entry `line`, or of these entries. */
  const deliver = (seq: number, content: string | WireEntry[]): FakeMessage => {
    let acked = false;
    let naked = false;
    let terminated: string | undefined;
    const entries = typeof content === 'string' ? [{ timestamp: BigInt(seq), line: content, structuredMetadata: [] }] : content;
    const data = encodeEntryBatch({ labels: { app: 'a' }, entries });
    const message = {
      seq,
      data,
      ack: () => {
        acked = true;
        ackThrough(seq);
      },
      ackAck: async () => {
        acked = true;
        confirmedAcks++;
        ackThrough(seq);
        return true;
      },
      nak: () => void (naked = true),
      term: (reason = '') => void (terminated = reason),
    };
    callback!(message as unknown as JsMsg);
    // A terminated message stays terminated, whatever acknowledgement covers it later.
    const covered = () => acked || (seq <= ackedThrough && terminated === undefined);
    return { seq, data, acked: covered, naked: () => naked, terminated: () => terminated };
  };
  return {
    jsm: jsm as unknown as JetStreamManager,
    js: js as unknown as JetStreamClient,
    added,
    deliver,
    /** How many acknowledgements the reader sent. */
    acks: () => acks,
    confirmedAcks: () => confirmedAcks,
    fetches,
    failures,
    endFetch: () => endFetch(),
    /** Messages no fetch has taken yet. */
    waiting: () => queue.length,
  };
}

function reader(
  fake: ReturnType<typeof fakeJetStream>,
  overrides: Partial<PartitionReaderOptions> & Pick<PartitionReaderOptions, 'forward' | 'holds'>,
): PartitionReader {
  return new PartitionReader({
    js: fake.js,
    jsm: fake.jsm,
    stream: 'S',
    subject: 'S.0',
    consumerPrefix: 'g-0',
    token: 7,
    partition: 0,
    maxInFlight: 100,
    ackDelayMs: 0,
    ackWaitMs: 60_000,
    maxEntriesPerMessage: 100_000,
    termReasons: false,
    maxPayloadBytes: 1024 * 1024,
    // Every message is cut at full slices here, as large ones are; the default is tested alone.
    wholeMessageBytes: 0,
    failed: () => {},
    metrics: jetStreamSourceMetrics(new Registry()),
    labels: { component_id: 'c' },
    log: () => {},
    ...overrides,
  });
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
const ticks = async (n: number) => {
  for (let i = 0; i < n; i++) await tick();
};
const linesOf = (from: number, count: number): WireEntry[] =>
  Array.from({ length: count }, (_, i) => ({ timestamp: BigInt(from + i), line: `l${from + i}`, structuredMetadata: [] }));

/** A receiver that takes each batch over only when told to. */
function heldReceiver() {
  const batches: Entry[][] = [];
  const releases: Array<() => void> = [];
  return {
    batches,
    forward: (entries: Entry[]) => {
      batches.push(entries);
      return new Promise<void>((resolve) => releases.push(resolve));
    },
    release: () => {
      for (const release of releases.splice(0)) release();
    },
    lines: () => batches.flat().map((e) => e.line),
  };
}

describe('PartitionReader', () => {
  it('starts where the old consumer started when that consumer has acknowledged nothing yet', async () => {
    // A consumer created at sequence 11 reports an acknowledgement floor of 0 until its first
    // acknowledgement: starting at floor + 1 read the whole partition again.
    const fake = fakeJetStream({ ackFloor: 0, optStartSeq: 11 });
    await reader(fake, { forward: async () => {}, holds: () => true }).start();
    expect(fake.added.map((c) => c.opt_start_seq)).toEqual([11]);
  });

  it('starts after the acknowledgement floor once the old consumer has acknowledged', async () => {
    const fake = fakeJetStream({ ackFloor: 40, optStartSeq: 11 });
    await reader(fake, { forward: async () => {}, holds: () => true }).start();
    const fresh = fakeJetStream(undefined);
    await reader(fresh, { forward: async () => {}, holds: () => true }).start();
    expect([...fake.added, ...fresh.added].map((c) => c.opt_start_seq)).toEqual([41, 1]);
  });

  it('re-creates the consumer it deleted even when the session ends during the delete', async () => {
    // A stop (or a lost lease) between deleting the old consumer and adding the new one left the
    // partition without its durable consumer: the next owner read it again from sequence 1.
    for (const end of ['drain', 'abandon'] as const) {
      const fake = fakeJetStream({ ackFloor: 40, optStartSeq: 11 });
      const r = reader(fake, { forward: async () => {}, holds: () => true });
      const consumers = fake.jsm.consumers as unknown as { delete: () => Promise<boolean> };
      consumers.delete = async () => {
        if (end === 'drain') void r.drain();
        else r.abandon();
        return true;
      };
      await r.start();
      expect([end, fake.added.map((c) => c.opt_start_seq)]).toEqual([end, [41]]);
      // The session is over all the same: nothing is fetched.
      expect(fake.fetches).toEqual([]);
    }
  });

  it('goes on forwarding and acknowledging once a lease that lapsed for a moment is renewed', async () => {
    const fake = fakeJetStream({ ackFloor: 0, optStartSeq: 1 });
    let holding = true;
    const forwarded: string[] = [];
    const r = reader(fake, {
      forward: async (entries: Entry[]) => void forwarded.push(...entries.map((e) => e.line)),
      holds: () => holding,
      ackDelayMs: 20,
    });
    await r.start();
    // The lease lapses locally (a renewal is late) after a batch was forwarded, before it is
    // acknowledged (ack delay), and while another message comes in.
    const first = fake.deliver(1, 'one');
    while (forwarded.length === 0) await tick();
    holding = false;
    const second = fake.deliver(2, 'two');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(first.acked()).toBe(false);
    expect(forwarded).toEqual(['one']);
    // The server accepted the renewal: the lease was never taken.
    holding = true;
    r.resume();
    await vi.waitFor(() => expect([first.acked(), second.acked()]).toEqual([true, true]));
    expect(forwarded).toEqual(['one', 'two']);
  });

  it('reads nothing before the previous session of the partition has settled', async () => {
    const fake = fakeJetStream({ ackFloor: 0, optStartSeq: 1 });
    // The first session forwards a batch a stage holds on to, then loses the lease.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = reader(fake, { forward: () => held, holds: () => true });
    await first.start();
    fake.deliver(1, 'one');
    await ticks(3);
    first.abandon();
    let settled = false;
    const leftovers = first.settled().then(() => void (settled = true));
    // The partition is taken again at once: the new session waits for the held batch.
    const forwarded: string[] = [];
    const second = reader(fake, {
      forward: async (entries: Entry[]) => void forwarded.push(...entries.map((e) => e.line)),
      holds: () => true,
      after: leftovers,
    });
    const starting = second.start();
    await tick();
    expect(fake.added).toHaveLength(1);
    expect(settled).toBe(false);
    release();
    await starting;
    expect(settled).toBe(true);
    expect(fake.added).toHaveLength(2);
    fake.deliver(1, 'one');
    await vi.waitFor(() => expect(forwarded).toEqual(['one']));
  });

  it('forwards a large message in slices and acknowledges it once its last slice was taken over', async () => {
    const fake = fakeJetStream(undefined);
    const receiver = heldReceiver();
    const r = reader(fake, { forward: receiver.forward, holds: () => true });
    await r.start();
    const message = fake.deliver(1, linesOf(0, 5000));
    await vi.waitFor(() => expect(receiver.lines()).toHaveLength(5000));
    expect(receiver.lines()).toEqual(linesOf(0, 5000).map((e) => e.line));
    expect(Math.max(...receiver.batches.map((b) => b.length))).toBeLessThanOrEqual(1024);
    expect(receiver.batches.length).toBeGreaterThanOrEqual(5);
    await ticks(5);
    expect(message.acked()).toBe(false);
    receiver.release();
    await vi.waitFor(() => expect(message.acked()).toBe(true));
  });

  it('forwards a message of up to 256 KiB whole, giving the event loop its turn after it', async () => {
    const fake = fakeJetStream(undefined);
    const receiver = heldReceiver();
    const r = reader(fake, { forward: receiver.forward, holds: () => true, wholeMessageBytes: undefined });
    await r.start();
    // 5,000 short lines: about 40 KB, five slices' worth, forwarded as one batch; then a second
    // message of the same size, its own batch after the turn.
    fake.deliver(1, linesOf(0, 5000));
    fake.deliver(2, linesOf(5000, 5000));
    await vi.waitFor(() => expect(receiver.lines()).toHaveLength(10_000));
    expect(receiver.batches.map((b) => b.length)).toEqual([5000, 5000]);
  });

  it('fetches no more while 4 MiB of messages wait to be decoded, as many at a time as fit', async () => {
    const fake = fakeJetStream(undefined);
    const receiver = heldReceiver();
    const r = reader(fake, { forward: receiver.forward, holds: () => true });
    await r.start();
    // 12 messages of 900 KB (9,000 lines of 90 bytes); the receivers take nothing over, so
    // decoding stops in the second.
    const lines = (m: number) => linesOf(m * 9000, 9000).map((e) => ({ ...e, line: e.line.padEnd(90, '.') }));
    const messages = Array.from({ length: 12 }, (_, m) => fake.deliver(m + 1, lines(m)));
    await ticks(200);
    // Messages of max_payload (1 MiB) are assumed at first: 4 fill 4 MiB. Then the size seen
    // (900 KB) counts: what is left asks for one more at a time.
    expect(fake.fetches.slice(0, 2).map((f) => f.max_messages)).toEqual([4, 1]);
    // The first message is decoded, the second in part: at most 4 MiB and one message more wait.
    expect(fake.waiting()).toBeGreaterThanOrEqual(6);
    while (!messages.every((m) => m.acked())) {
      receiver.release();
      await tick();
    }
    expect(receiver.lines()).toHaveLength(12 * 9000);
    expect(fake.waiting()).toBe(0);
  });

  it('tries a failed fetch again without ending the session, and ends it after three failures in a row', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const fake = fakeJetStream(undefined);
      const forwarded: string[] = [];
      const failed: string[] = [];
      fake.failures.push(new Error('heartbeats missed'), new Error('heartbeats missed'));
      const r = reader(fake, {
        forward: async (entries: Entry[]) => void forwarded.push(...entries.map((e) => e.line)),
        holds: () => true,
        failed: (error) => failed.push(error),
      });
      await r.start();
      await vi.advanceTimersByTimeAsync(2000);
      const message = fake.deliver(1, 'one');
      await vi.waitFor(() => expect(message.acked()).toBe(true));
      expect([forwarded, failed, fake.fetches.length]).toEqual([['one'], [], 3]);
      // The open fetch ends; three failures in a row follow.
      fake.failures.push(new Error('timeout'), new Error('timeout'), new Error('timeout'));
      await fake.endFetch();
      await vi.advanceTimersByTimeAsync(2000);
      expect(failed).toEqual(['fetching messages of partition 0 failed: timeout']);
      const late = fake.deliver(2, 'two');
      await ticks(5);
      expect([forwarded, late.acked()]).toEqual([['one'], false]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops decoding while too many entries are on their way through the receivers', async () => {
    const fake = fakeJetStream(undefined);
    const receiver = heldReceiver();
    const r = reader(fake, { forward: receiver.forward, holds: () => true });
    await r.start();
    const total = MAX_FORWARDING_ENTRIES * 3;
    const message = fake.deliver(1, linesOf(0, total));
    await ticks(200);
    const forwarded = receiver.lines().length;
    expect(forwarded).toBeGreaterThan(MAX_FORWARDING_ENTRIES);
    expect(forwarded).toBeLessThanOrEqual(MAX_FORWARDING_ENTRIES + 1024);
    // Taken over batch by batch, the rest follows.
    while (receiver.lines().length < total) {
      receiver.release();
      await tick();
    }
    receiver.release();
    await vi.waitFor(() => expect(message.acked()).toBe(true));
    expect(receiver.lines()).toEqual(linesOf(0, total).map((e) => e.line));
  });

  it('goes on in the middle of a message once a lease that lapsed for a moment is renewed', async () => {
    const fake = fakeJetStream(undefined);
    let holding = true;
    let lapsed = false;
    const forwarded: string[] = [];
    const r = reader(fake, {
      forward: async (entries: Entry[]) => {
        forwarded.push(...entries.map((e) => e.line));
        // The lease lapses locally, once, while the message is being read.
        if (!lapsed && forwarded.length >= 2000) holding = !(lapsed = true);
      },
      holds: () => holding,
    });
    await r.start();
    const message = fake.deliver(1, linesOf(0, 6000));
    await vi.waitFor(() => expect(forwarded.length).toBeGreaterThanOrEqual(2000));
    await ticks(20);
    const before = forwarded.length;
    expect(before).toBeLessThan(6000);
    expect(message.acked()).toBe(false);
    holding = true;
    r.resume();
    await vi.waitFor(() => expect(message.acked()).toBe(true));
    expect(forwarded).toEqual(linesOf(0, 6000).map((e) => e.line));
  });

  it('finishes the message being read when it hands the partition over gracefully', async () => {
    const fake = fakeJetStream(undefined);
    const receiver = heldReceiver();
    const r = reader(fake, { forward: receiver.forward, holds: () => true });
    await r.start();
    const total = MAX_FORWARDING_ENTRIES * 2;
    const message = fake.deliver(1, linesOf(0, total));
    const next = fake.deliver(2, 'next');
    await ticks(200);
    expect(receiver.lines().length).toBeLessThan(total);
    let drained = false;
    const draining = r.drain().then(() => (drained = true));
    while (!drained) {
      receiver.release();
      await tick();
    }
    await draining;
    expect(receiver.lines()).toEqual(linesOf(0, total).map((e) => e.line));
    expect([message.acked(), message.naked(), next.acked(), next.naked()]).toEqual([true, false, false, true]);
  });

  it('hands a message read in part back when the lease is lost', async () => {
    const fake = fakeJetStream(undefined);
    const receiver = heldReceiver();
    const r = reader(fake, { forward: receiver.forward, holds: () => true });
    await r.start();
    const message = fake.deliver(1, linesOf(0, MAX_FORWARDING_ENTRIES * 2));
    const next = fake.deliver(2, 'next');
    await ticks(200);
    r.abandon();
    receiver.release();
    await ticks(5);
    expect([message.naked(), message.acked(), next.naked(), next.acked()]).toEqual([true, false, true, false]);
  });

  it('acknowledges a batch of several messages once, with its last message (ack policy all)', async () => {
    const fake = fakeJetStream(undefined);
    const receiver = heldReceiver();
    const r = reader(fake, { forward: receiver.forward, holds: () => true });
    const messages = [1, 2, 3, 4, 5].map((seq) => fake.deliver(seq, `m${seq}`));
    await r.start();
    await vi.waitFor(() => expect(receiver.lines()).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']));
    expect(receiver.batches.map((batch) => batch.map((e) => e.line))).toEqual([['m1', 'm2', 'm3', 'm4', 'm5']]);
    expect(fake.acks()).toBe(0);
    receiver.release();
    await vi.waitFor(() => expect(messages.map((m) => m.acked())).toEqual([true, true, true, true, true]));
    expect(fake.acks()).toBe(1);
  });

  it('has the server confirm the last acknowledgement before a hand-over, when a terminated message ends the batch too', async () => {
    const fake = fakeJetStream(undefined);
    const receiver = heldReceiver();
    const r = reader(fake, { forward: receiver.forward, holds: () => true, maxEntriesPerMessage: 1 });
    const kept = fake.deliver(1, 'm1');
    const large = fake.deliver(2, linesOf(0, 2));
    await r.start();
    await vi.waitFor(() => expect(receiver.lines()).toEqual(['m1']));
    await ticks(20);
    const draining = r.drain();
    receiver.release();
    await draining;
    expect([kept.acked(), large.terminated(), fake.acks(), fake.confirmedAcks()]).toEqual([true, '', 1, 1]);
  });

  it('terminates a message with more entries than the limit unread, with its reason, and goes on', async () => {
    const fake = fakeJetStream(undefined);
    const registry = new Registry();
    const logs: string[] = [];
    const forwarded: string[] = [];
    const r = reader(fake, {
      forward: async (entries: Entry[]) => void forwarded.push(...entries.map((e) => e.line)),
      holds: () => true,
      maxEntriesPerMessage: 10,
      termReasons: true,
      metrics: jetStreamSourceMetrics(registry),
      log: (level, message, fields) => void (level === 'warn' && logs.push(`${level} ${message} ${JSON.stringify(fields)}`)),
    });
    await r.start();
    const large = fake.deliver(1, linesOf(0, 11));
    const small = fake.deliver(2, linesOf(100, 10));
    await vi.waitFor(() => expect(small.acked()).toBe(true));
    expect(forwarded).toEqual(linesOf(100, 10).map((e) => e.line));
    expect(large.terminated()).toBe('message has 11 entries, more than the limit of 10 (max_entries_per_message)');
    expect(large.acked()).toBe(false);
    expect(logs).toEqual([
      'warn terminating a message with more entries than max_entries_per_message {"partition":0,"sequence":1,"entries":11,"limit":10}',
    ]);
    const terminated = await registry.getSingleMetric('logs_source_jetstream_terminated_messages_total')!.get();
    expect(terminated.values).toEqual([{ labels: { component_id: 'c', reason: 'too_many_entries' }, value: 1 }]);
  });

  it('terminates without a reason where the server takes none', async () => {
    const fake = fakeJetStream(undefined);
    const r = reader(fake, { forward: async () => {}, holds: () => true, maxEntriesPerMessage: 1 });
    await r.start();
    const large = fake.deliver(1, linesOf(0, 2));
    await vi.waitFor(() => expect(large.terminated()).toBe(''));
  });
});
