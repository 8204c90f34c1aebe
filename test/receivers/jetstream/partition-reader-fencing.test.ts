/**
 * Fencing at the NATS level: two PartitionReaders of one partition on a real nats-server, the
 * former owner stalled (it has not noticed that its lease is gone) and still pulling while the
 * new owner reads. Each grant reads through a consumer of its own, which the new owner's start
 * deletes for the former one, so the new owner forwards every message; when every owner shared
 * one consumer, the former owner pulled some of the new owner's messages and handed them back,
 * and the new owner, already past them, dropped them as redeliveries.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../../core/entry.js';
import { encodeEntryBatch } from '../../../lib/jetstream/entry-codec.js';
import { jetStreamSourceMetrics } from '../../../receivers/jetstream/metrics.js';
import { PartitionReader, type PartitionReaderOptions } from '../../../receivers/jetstream/partition-reader.js';
import { natsServerForTests } from '../../support/nats-server.js';

const nats = natsServerForTests('FENCE');
const { program: natsServer, cleanups, nextStream } = nats;

const MESSAGES = 2000;

async function connected(): Promise<NatsConnection> {
  const nc = await connect({ servers: nats.server.url });
  cleanups.push(() => nc.close());
  return nc;
}

/** A stream with MESSAGES one-line messages `m<i>` on partition 0. */
async function backlog(nc: NatsConnection): Promise<string> {
  const stream = nextStream();
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`${stream}.*`] });
  const js = jetstream(nc);
  for (let from = 0; from < MESSAGES; from += 250)
    await Promise.all(
      Array.from({ length: Math.min(250, MESSAGES - from) }, (_, k) =>
        js.publish(
          `${stream}.0`,
          encodeEntryBatch({
            labels: { app: 'a' },
            entries: [{ timestamp: BigInt(from + k), line: `m${from + k}`, structuredMetadata: [] }],
          }),
        ),
      ),
    );
  return stream;
}

async function readerFor(
  nc: NatsConnection,
  stream: string,
  token: number,
  options: Pick<PartitionReaderOptions, 'forward' | 'holds'> & Partial<PartitionReaderOptions>,
): Promise<PartitionReader> {
  const reader = new PartitionReader({
    js: jetstream(nc),
    jsm: await jetstreamManager(nc),
    stream,
    subject: `${stream}.0`,
    consumerPrefix: 'g-0',
    token,
    partition: 0,
    maxInFlight: 200,
    ackDelayMs: 0,
    ackWaitMs: 60_000,
    maxEntriesPerMessage: 100_000,
    termReasons: false,
    maxPayloadBytes: 1024 * 1024,
    failed: () => {},
    metrics: jetStreamSourceMetrics(new Registry()),
    labels: { component_id: 'c' },
    log: () => {},
    ...options,
  });
  cleanups.push(async () => reader.abandon());
  return reader;
}

const until = async (check: () => boolean, ms: number, what: string) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe.skipIf(natsServer.skip)(natsServer.title('PartitionReader fencing'), { timeout: 40_000 }, () => {
  it('lets the new owner forward every message while a stalled former owner keeps pulling', async () => {
    const nc = await connected();
    const stream = await backlog(nc);
    // The former owner forwards into a pipeline that never takes anything over (it is stalled),
    // and it has not noticed that its lease is gone: as far as it knows it still holds it.
    const stale: string[] = [];
    const former = await readerFor(nc, stream, 1, {
      forward: (entries: Entry[]) => {
        stale.push(...entries.map((e) => e.line));
        return new Promise<void>(() => {});
      },
      holds: () => true,
    });
    await former.start();
    await until(() => stale.length >= 200, 10_000, 'the former owner reading');

    // The new owner's pipeline takes a batch over in 300 ms: it is still reading when the former
    // owner's open fetch (5 s) has ended and the former owner pulls again.
    const forwarded: string[] = [];
    const owner = await readerFor(nc, stream, 2, {
      forward: async (entries: Entry[]) => {
        forwarded.push(...entries.map((e) => e.line));
        await new Promise((r) => setTimeout(r, 300));
      },
      holds: () => true,
      maxInFlight: 100,
    });
    await owner.start();
    await new Promise((r) => setTimeout(r, 6500));
    // Its renewal is refused at last: it hands back what it holds.
    former.abandon();
    await until(() => new Set(forwarded).size === MESSAGES, 15_000, `every message at the new owner (${new Set(forwarded).size})`);
    // In stream order, once each (nothing was acknowledged before it took over).
    expect(forwarded).toEqual(Array.from({ length: MESSAGES }, (_, i) => `m${i}`));
    // Only the new grant's consumer is left.
    const names: string[] = [];
    for await (const info of await (await jetstreamManager(nc)).consumers.list(stream)) names.push(info.name);
    expect(names).toEqual(['g-0-2']);
  });

  it('pulls nothing while the lease is not known to be current', async () => {
    const nc = await connected();
    const stream = await backlog(nc);
    let holding = false;
    const forwarded: string[] = [];
    const reader = await readerFor(nc, stream, 3, {
      forward: async (entries: Entry[]) => void forwarded.push(...entries.map((e) => e.line)),
      holds: () => holding,
    });
    await reader.start();
    await new Promise((r) => setTimeout(r, 500));
    const info = await (await jetstreamManager(nc)).consumers.info(stream, 'g-0-3');
    expect([info.delivered.stream_seq, forwarded.length]).toEqual([0, 0]);
    holding = true;
    reader.resume();
    await until(() => forwarded.length === MESSAGES, 10_000, 'every message once the lease is current');
  });
});

describe.skipIf(natsServer.skip)(natsServer.title('PartitionReader start race'), { timeout: 20_000 }, () => {
  it('leaves only the newest grant consumer when a former owner creates its consumer after the new owner listed', async () => {
    const nc = await connected();
    const stream = await backlog(nc);
    // The former owner's consumer lands late: its create is held until the new owner has
    // listed, created its own and deleted the earlier ones it saw. Without listing again after
    // creating, the former grant's consumer stayed behind, unread, with every message pending.
    let releaseFormer!: () => void;
    const formerMayCreate = new Promise<void>((resolve) => (releaseFormer = resolve));
    const realJsm = await jetstreamManager(nc);
    const heldJsm = Object.create(realJsm) as typeof realJsm;
    Object.defineProperty(heldJsm, 'consumers', {
      value: Object.assign(Object.create(realJsm.consumers), {
        add: async (...args: Parameters<typeof realJsm.consumers.add>) => {
          await formerMayCreate;
          return realJsm.consumers.add(...args);
        },
      }),
    });
    const former = await readerFor(nc, stream, 1, { forward: async () => {}, holds: () => true, jsm: heldJsm });
    const formerStart = former.start().catch((err: Error) => err.message);
    await new Promise((r) => setTimeout(r, 200));
    const owner = await readerFor(nc, stream, 2, { forward: async () => {}, holds: () => true });
    await owner.start();
    releaseFormer();
    expect(await formerStart).toBe("partition 0 has a newer owner (lease token 2, this reader's 1)");
    const names: string[] = [];
    for await (const info of await realJsm.consumers.list(stream)) names.push(info.name);
    expect(names).toEqual(['g-0-2']);
  });
});
