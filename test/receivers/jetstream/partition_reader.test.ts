/**
 * PartitionReader against a fake consumer: where a re-created consumer starts, that a lease which
 * lapsed for a moment does not stop acknowledging for good, and that a new session waits for the
 * previous one's batches.
 */
import { JetStreamApiCodes, JetStreamApiError, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import type { Entry } from '../../../core/entry.js';
import { encodeEntryBatch } from '../../../lib/jetstream/entry_codec.js';
import { jetStreamSourceMetrics } from '../../../receivers/jetstream/metrics.js';
import { PartitionReader, type PartitionReaderOptions } from '../../../receivers/jetstream/partition_reader.js';

interface FakeMessage {
  readonly seq: number;
  readonly data: Uint8Array;
  readonly acked: () => boolean;
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
      delete: async () => true,
      add: async (_stream: string, config: { opt_start_seq?: number }) => {
        added.push(config);
        return {};
      },
    },
  };
  const js = {
    consumers: {
      get: async () => ({
        consume: async (opts: { callback: (m: JsMsg) => void }) => {
          callback = opts.callback;
          return { close: async () => {} };
        },
      }),
    },
  };
  const deliver = (seq: number, line: string): FakeMessage => {
    let acked = false;
    const data = encodeEntryBatch({ labels: { app: 'a' }, entries: [{ timestamp: BigInt(seq), line, structuredMetadata: [] }] });
    const message = {
      seq,
      data,
      ack: () => void (acked = true),
      ackAck: async () => (acked = true),
      nak: () => {},
      term: () => {},
    };
    callback!(message as unknown as JsMsg);
    return { seq, data, acked: () => acked };
  };
  return { jsm: jsm as unknown as JetStreamManager, js: js as unknown as JetStreamClient, added, deliver };
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
    durable: 'g-0',
    partition: 0,
    maxInFlight: 100,
    ackDelayMs: 0,
    ackWaitMs: 60_000,
    failed: () => {},
    metrics: jetStreamSourceMetrics(new Registry()),
    labels: { component_id: 'c' },
    log: () => {},
    ...overrides,
  });
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

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
    await tick();
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
    await tick();
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
});
