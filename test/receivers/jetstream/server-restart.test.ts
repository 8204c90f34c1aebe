/**
 * Lost connections under a group of readers, on a real server at the smallest lease_ttl.
 *
 * A nats-server restart: the client drops every request and acknowledgement it had to send while
 * the server was away. A renewal lost that way used to hold the next one back for the client's 5 s
 * timeout, longer than the TTL, so every lease lapsed after a restart of a fraction of a second and
 * the next owners read again from the acknowledgement floor what had been forwarded after the
 * restart; and the acknowledgements lost left the floor behind until ack_wait, so a partition
 * handed over after the restart was read again from there.
 *
 * A connection cut while the server delivers: what it delivered into the connection is lost, and
 * the consumer goes on with later messages; the lost ones come again after their ack_wait, below
 * the highest sequence the session forwarded, and were dropped as redeliveries.
 */
import { createServer, connect as connectTcp, type AddressInfo, type Socket } from 'node:net';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../core/clock.js';
import { labelsKey } from '../../../core/entry.js';
import { encodeEntryBatch } from '../../../lib/jetstream/entry-codec.js';
import { layoutDescription, partitionOf } from '../../../lib/jetstream/partition.js';
import { JetStreamGroupReader } from '../../../receivers/jetstream/group-reader.js';
import { startNatsServer } from '../../support/nats-server.js';
import { needs } from '../../support/system-binaries.js';

const natsServer = needs('nats-server');
const PARTITIONS = 4;
const ACK_DELAY_MS = 1000;
const ROUNDS = 40;
const RESTART_ROUND = 20;
/** Two streams on each partition. */
const PODS = Array.from({ length: 64 }, (_, i) => `pod-${i}`)
  .filter(
    (pod, i, all) =>
      all.slice(0, i).filter((p) => partitionOf(labelsKey({ pod: p }), PARTITIONS) === partitionOf(labelsKey({ pod }), PARTITIONS)).length <
      2,
  )
  .slice(0, 2 * PARTITIONS);

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Delivery {
  readonly line: string;
  readonly at: number;
}

/** A group member forwarding into `deliveries`, with its connection set up as logs.source.jetstream's. */
function member(
  url: string,
  deliveries: Delivery[],
  registry: Registry,
  options: { partitions?: number; ackDelayMs?: number; ackWaitMs?: number } = {},
): JetStreamGroupReader {
  const connection = { servers: [url], reconnect: true, maxReconnectAttempts: -1, reconnectTimeWait: 1000, timeout: 5000 };
  const reader = new JetStreamGroupReader(
    {
      connection: { servers: [url], display: url, name: 'member', options: connection, fingerprint: url },
      stream: 'LOGS',
      group: 'g',
      partitions: options.partitions ?? PARTITIONS,
      prefix: 'LOGS',
      leaseTtlMs: 3000,
      maxInFlight: 1000,
      ackDelayMs: options.ackDelayMs ?? ACK_DELAY_MS,
      ackWaitMs: options.ackWaitMs ?? 60_000,
      maxEntriesPerMessage: 100_000,
    },
    { id: 'in', clock: systemClock(), registry, stdout: process.stdout, log: () => {} },
  );
  reader.start({ send: async (entries) => void deliveries.push(...entries.map((e) => ({ line: e.line, at: Date.now() }))) });
  cleanups.push(() => reader.stop());
  return reader;
}

/** Publishes a round's messages, each with its own message id, retrying until stored. */
async function publishRound(nc: NatsConnection, n: number): Promise<void> {
  const js = jetstream(nc, { timeout: 1000 });
  for (const pod of PODS) {
    const labels = { pod };
    const data = encodeEntryBatch({ labels, entries: [{ timestamp: BigInt(n), line: `${n} ${pod}`, structuredMetadata: [] }] });
    for (;;) {
      try {
        await js.publish(`LOGS.${partitionOf(labelsKey(labels), PARTITIONS)}`, data, { msgID: `${n}-${pod}` });
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
}

async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A TCP proxy to `port` that can hold what the server sends (it is then lost with the connection,
 * as what a server wrote into a connection that went down) and cut every connection.
 */
async function holdingProxy(port: number): Promise<{ url: string; hold(): void; cut(): void }> {
  let holding = false;
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const upstream = connectTcp(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => void (holding || client.write(chunk)));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => proxy.close(resolve));
  });
  return {
    url: `nats://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    hold: () => void (holding = true),
    cut: () => {
      for (const socket of sockets) socket.destroy();
      holding = false;
    },
  };
}

const lostLeases = async (registry: Registry) =>
  (await registry.getSingleMetric('logs_source_jetstream_partition_changes_total')!.get()).values
    .filter((v) => v.labels.change === 'lost')
    .reduce((n, v) => n + v.value, 0);

describe.skipIf(natsServer.skip)(natsServer.title('a group of readers across a nats-server restart'), { timeout: 90_000 }, () => {
  it('reads nothing twice across a restart, loses no lease, and leaves every floor at the last message', async () => {
    const server = await startNatsServer();
    cleanups.push(() => server.close());
    const nc = await connect({ servers: server.url, reconnectTimeWait: 100, maxReconnectAttempts: -1 });
    cleanups.push(() => nc.close());
    await (await jetstreamManager(nc)).streams.add({
      name: 'LOGS',
      subjects: ['LOGS.*'],
      description: layoutDescription('LOGS', PARTITIONS),
    });

    const deliveries: Delivery[] = [];
    const registries = [new Registry(), new Registry(), new Registry()];
    const members = [member(server.url, deliveries, registries[0]!), member(server.url, deliveries, registries[1]!)];
    await until(() => members.every((m) => m.ownedPartitions().length === 2), 15_000, 'a 2/2 split');

    for (let n = 0; n < ROUNDS; n++) {
      if (n === RESTART_ROUND) {
        await server.stop();
        await server.start();
      }
      // A third member joins after the restart: a partition is handed over gracefully, and its next
      // owner starts at the floor its consumer shows.
      if (n === RESTART_ROUND + 10) members.push(member(server.url, deliveries, registries[2]!));
      await publishRound(nc, n);
      await new Promise((r) => setTimeout(r, 100));
    }
    const written = ROUNDS * PODS.length;
    await until(() => new Set(deliveries.map((d) => d.line)).size === written, 30_000, 'every message delivered');
    await until(
      async () => (await Promise.all(members.map((m) => m.ownedPartitions().length))).sort().join() === '1,1,2',
      15_000,
      'a 2/1/1 split',
    );
    await new Promise((r) => setTimeout(r, ACK_DELAY_MS + 1000));

    // What was in flight at the restart (forwarded less than the ack delay before it) is
    // acknowledged after it, so nothing comes twice.
    const lines = deliveries.map((d) => d.line);
    // Every partition's consumer has its floor at (or, caught up, past) the partition's last message;
    // one created after it and that has acknowledged nothing reports 0, its floor is before its start.
    const jsm = await jetstreamManager(nc);
    const floorsBehind: string[] = [];
    for await (const info of await jsm.consumers.list('LOGS')) {
      const subject = info.config.filter_subject!;
      const last = (await jsm.streams.getMessage('LOGS', { last_by_subj: subject }))!.seq;
      const floor = Math.max(info.ack_floor.stream_seq, (info.config.opt_start_seq ?? 1) - 1);
      if (floor < last) floorsBehind.push(`${subject} at ${floor} of ${last}`);
    }
    expect({
      twice: lines.filter((line, i) => lines.indexOf(line) !== i),
      lost: (await Promise.all(registries.map(lostLeases))).reduce((a, b) => a + b, 0),
      floorsBehind,
    }).toEqual({ twice: [], lost: 0, floorsBehind: [] });
  });

  it('reads again what the server delivered into a connection that was cut', async () => {
    const server = await startNatsServer();
    cleanups.push(() => server.close());
    const nc = await connect({ servers: server.url });
    cleanups.push(() => nc.close());
    await (await jetstreamManager(nc)).streams.add({ name: 'LOGS', subjects: ['LOGS.*'], description: layoutDescription('LOGS', 1) });
    const js = jetstream(nc);
    const publish = async (from: number, to: number) => {
      for (let i = from; i < to; i++)
        await js.publish(
          'LOGS.0',
          encodeEntryBatch({ labels: { pod: 'p' }, entries: [{ timestamp: BigInt(i), line: `m${i}`, structuredMetadata: [] }] }),
        );
    };
    const proxy = await holdingProxy(server.port);
    const deliveries: Delivery[] = [];
    const registry = new Registry();
    const reader = member(proxy.url, deliveries, registry, { partitions: 1, ackDelayMs: 0, ackWaitMs: 2000 });
    await until(() => reader.ownedPartitions().length === 1, 10_000, 'the partition owned');
    await publish(0, 50);
    await until(() => deliveries.length === 50, 10_000, 'the first 50 messages');
    // What the server delivers now goes into the connection and no further.
    proxy.hold();
    await publish(50, 100);
    await new Promise((r) => setTimeout(r, 300));
    proxy.cut();
    await until(() => reader.health().state === 'healthy' && reader.health().message.includes('owns partitions 0'), 10_000, 'reconnected');
    await publish(100, 150);
    // Past the lost deliveries' ack_wait, when the server delivers them again.
    await until(() => new Set(deliveries.map((d) => d.line)).size === 150, 10_000, 'every message').catch(() => {});
    const lines = deliveries.map((d) => d.line);
    expect({
      missing: Array.from({ length: 150 }, (_, i) => `m${i}`).filter((line) => !lines.includes(line)),
      twice: lines.filter((line, i) => lines.indexOf(line) !== i),
      lost: await lostLeases(registry),
    }).toEqual({ missing: [], twice: [], lost: 0 });
  });
});
