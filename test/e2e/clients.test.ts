import pino from 'pino';
import { pinoLoki } from 'pino-loki';
import winston from 'winston';
import LokiTransport from 'winston-loki';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, recordingReceiver, startSourceApi, type StartedSourceApi } from '../receivers/loki/harness.js';

const started: StartedSourceApi[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((a) => a.stop()));
});

async function api(receiver = recordingReceiver()) {
  const running = await startSourceApi([receiver], { extra: 'use_incoming_timestamp = true' });
  started.push(running);
  return { ...running, receiver };
}

const BASE_NS = 1_700_000_000_123_456_789n;

describe('real clients pushing to logs.source.api', () => {
  it('receives pino-loki (JSON) entries with labels, lines, metadata and nanosecond timestamps', async () => {
    const { url, receiver } = await api();
    const transport = pinoLoki({
      host: url,
      batching: { interval: 0.05 },
      labels: { app: 'pino-test' },
      propsToLabels: ['component'],
      silenceErrors: false,
    });
    // A nanosecond time string per record: pino-loki sends a 19-digit time as it is.
    let now = BASE_NS;
    const logger = pino({ base: { hostname: 'host-1' }, timestamp: () => `,"time":"${now}"` }, transport);
    for (let i = 0; i < 50; i++) {
      now = BASE_NS + BigInt(i);
      logger.info({ component: i % 2 === 0 ? 'api' : 'db', meta: { trace_id: `t${i}` } }, `message ${i}`);
    }
    await eventually(() => receiver.entries.length === 50, 10_000, 'the pino entries');
    transport.end();
    expect(receiver.entries.map((e) => JSON.parse(e.line).msg)).toEqual(Array.from({ length: 50 }, (_, i) => `message ${i}`));
    expect(receiver.entries.map((e) => e.timestamp)).toEqual(Array.from({ length: 50 }, (_, i) => BASE_NS + BigInt(i)));
    expect(receiver.entries[0]!.labels).toEqual({ app: 'pino-test', component: 'api', hostname: 'host-1', level: 'info' });
    expect(receiver.entries[1]!.labels).toEqual({ app: 'pino-test', component: 'db', hostname: 'host-1', level: 'info' });
    expect(receiver.entries[3]!.structuredMetadata).toEqual([{ name: 'trace_id', value: 't3' }]);
  });

  for (const json of [true, false]) {
    it(`receives winston-loki (${json ? 'JSON' : 'protobuf'}) entries with labels, lines and timestamps`, async () => {
      const { url, receiver } = await api();
      const errors: unknown[] = [];
      const transport = new LokiTransport({
        host: url,
        json,
        batching: true,
        interval: 0.05,
        labels: { app: 'winston-test' },
        replaceTimestamp: false,
        gracefulShutdown: false,
        onConnectionError: (err: unknown) => errors.push(err),
      });
      // winston-loki falls back to JSON when it cannot load snappy: make sure each mode is the one tested.
      expect((transport as unknown as { batcher: { contentType: string } }).batcher.contentType).toBe(
        json ? 'application/json' : 'application/x-protobuf',
      );
      const logger = winston.createLogger({ transports: [transport] });
      const baseMs = 1_700_000_000_123;
      for (let i = 0; i < 40; i++) {
        logger.log({
          level: i % 4 === 0 ? 'warn' : 'info',
          message: `event ${i}`,
          timestamp: new Date(baseMs + i).toISOString(),
          labels: { shard: String(i % 2) },
        });
      }
      await eventually(() => receiver.entries.length === 40, 10_000, 'the winston entries');
      await transport.close?.();
      expect(errors).toEqual([]);
      const byLine = new Map(receiver.entries.map((e) => [e.line.split(' {')[0]!.trim(), e]));
      for (let i = 0; i < 40; i++) {
        const entry = byLine.get(`event ${i}`)!;
        expect(entry.timestamp).toBe(BigInt(baseMs + i) * 1_000_000n);
        expect(entry.labels).toEqual({ app: 'winston-test', level: i % 4 === 0 ? 'warn' : 'info', shard: String(i % 2) });
        // The JSON mode sends the remaining fields as structured metadata; the protobuf mode drops them.
        expect(entry.structuredMetadata).toEqual(json ? [{ name: 'level', value: i % 4 === 0 ? 'warn' : 'info' }] : []);
      }
      // Each stream keeps its order.
      const shard0 = receiver.entries.filter((e) => e.labels.shard === '0' && e.labels.level === 'info').map((e) => e.timestamp);
      expect(shard0).toEqual([...shard0].sort((a, b) => (a < b ? -1 : 1)));
    });
  }
});
