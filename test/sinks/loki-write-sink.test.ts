import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { from } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { logSource, type LogBatch, type LogSource } from '../../core/delivery.js';
import type { Entry } from '../../core/entry.js';
import { RetryLaterError, type LogsReceiver } from '../../core/receiver.js';
import type { RunOptions } from '../../core/runtime/standalone.js';
import { ConfigErrors } from '../../lib/config/errors.js';
import { snappyDecode } from '../../lib/loki/compression.js';
import { decodePushRequest } from '../../lib/loki/wire.js';
import { lokiWrite, type LokiWriteOptions, type LokiWriteSink, type LogsWriteTestHooks } from '../../sinks/logs-write.js';
import type { PushResult, PushTransport } from '../../sinks/loki/transport.js';
import { entryOf, eventually, metricValue } from '../receivers/loki/harness.js';
import { startFakeLoki, type FakeLoki } from './loki/fake-loki.js';
import { fullDisk } from './loki/full-disk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Started {
  readonly sink: LokiWriteSink;
  readonly registry: Registry;
  readonly logs: string[];
}

/** A lokiWrite sink on its own registry, its log kept, stopped after the test. */
function startSink(options: LokiWriteOptions, hooks?: LogsWriteTestHooks): Started {
  const registry = new Registry();
  const logs: string[] = [];
  const run: RunOptions = {
    id: 'to-loki',
    registry,
    log: (level, message, fields) => logs.push(`${level} ${message}${fields ? ' ' + JSON.stringify(fields) : ''}`),
  };
  const sink = lokiWrite(options, run, hooks);
  cleanups.push(() => sink.stop());
  return { sink, registry, logs };
}

async function fakeLoki(): Promise<FakeLoki> {
  const loki = await startFakeLoki();
  cleanups.push(() => loki.close());
  return loki;
}

/** A source whose sends the test makes: each send is answered by the subscriber's ack or nack. */
function testSource(): { readonly source: LogSource; send(entries: Entry[]): Promise<void> } {
  let receiver: LogsReceiver | undefined;
  const source = logSource((r) => {
    receiver = r;
    return { stop: async () => {} };
  });
  return { source, send: (entries) => receiver!.send(entries) };
}

/** A batch that records its answer in `answers` as `ack <name>` or `nack <name>: <error>`. */
function recordedBatch(name: string, entries: Entry[], answers: string[], errors: unknown[] = []): LogBatch {
  return {
    entries,
    ack: () => answers.push(`ack ${name}`),
    nack: (error) => {
      errors.push(error);
      answers.push(`nack ${name}: ${(error as Error).message}`);
    },
  };
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('lokiWrite delivery', () => {
  it('delivers what a source emits, answering each send once the writer has queued it', async () => {
    const loki = await fakeLoki();
    const { sink, registry } = startSink({
      endpoint: [{ url: loki.url, batch_wait: '1h', tenant_id: 'team', headers: { 'X-Custom': 'yes' } }],
      external_labels: { cluster: 'eu', app: 'external' },
    });
    const { source, send } = testSource();
    source.subscribe(sink);
    const one: Entry = {
      ...entryOf('one', { app: 'web' }, 1_700_000_000_000_000_001n),
      structuredMetadata: [{ name: 'trace_id', value: 't1' }],
    };
    await send([one, entryOf('two', { app: 'db' }, 2n)]);
    await send([entryOf('three', { app: 'web' }, 3n)]);
    // Answered while the entries wait for their batch (batch_wait is an hour): queued is taken over.
    expect(loki.arrivals).toEqual([]);
    const host = `127.0.0.1:${loki.port}`;
    expect(await metricValue(registry, 'logs_write_queued_bytes', { component_id: 'to-loki', host })).toBe(
      'onetrace_idt1'.length + 'two'.length + 'three'.length,
    );
    // The source completing stops the sink, which sends what it holds without waiting for batch_wait.
    await source.stop();
    await sink.stop();
    expect(loki.accepted.length).toBe(1);
    const push = loki.accepted[0]!;
    expect([push.headers['x-scope-orgid'], push.headers['x-custom'], push.headers['user-agent']]).toEqual(['team', 'yes', 'Rivulet/0.1.0']);
    expect(push.streams).toEqual([
      {
        labels: { app: 'web', cluster: 'eu' },
        entries: [
          { timestampNs: 1_700_000_000_000_000_001n, line: 'one', structuredMetadata: [{ name: 'trace_id', value: 't1' }] },
          { timestampNs: 3n, line: 'three', structuredMetadata: [] },
        ],
      },
      { labels: { app: 'db', cluster: 'eu' }, entries: [{ timestampNs: 2n, line: 'two', structuredMetadata: [] }] },
    ]);
    expect(await metricValue(registry, 'logs_write_sent_entries_total', { component_id: 'to-loki', host })).toBe(3);
    expect(await metricValue(registry, 'logs_write_sent_bytes_total', { component_id: 'to-loki', host })).toBe(
      'onetrace_idt1twothree'.length,
    );
    expect(await metricValue(registry, 'logs_write_dropped_entries_total')).toBe(0);
    // Stopped: the gauge of what it holds is gone, and a late send is refused.
    expect((await registry.getSingleMetric('logs_write_queued_bytes')!.get()).values).toEqual([]);
    await expect(sink.send([entryOf('late')])).rejects.toThrow('logs.write is stopped');
  });

  it('takes a plain Observable of batches: acknowledges each once queued, and drains when it completes', async () => {
    const loki = await fakeLoki();
    const { sink } = startSink({ endpoint: [{ url: loki.url, batch_wait: '1h' }] });
    const answers: string[] = [];
    from([recordedBatch('a', [entryOf('a')], answers), recordedBatch('b', [entryOf('b')], answers)]).subscribe(sink);
    await eventually(() => answers.length === 2, 5000, 'the answers');
    expect(answers).toEqual(['ack a', 'ack b']);
    await sink.stop();
    expect(loki.accepted.map((p) => p.streams.flatMap((s) => s.entries.map((e) => e.line)))).toEqual([['a', 'b']]);
  });

  it('withholds the acknowledgement while the queue is at capacity, and gives it once a batch is delivered', async () => {
    const requests: string[][] = [];
    const releases: Array<() => void> = [];
    const transport: PushTransport = (request) => {
      requests.push(decodePushRequest(snappyDecode(request.body, 1 << 20)).flatMap((s) => s.entries.map((e) => e.line)));
      return new Promise<PushResult>((resolve) => releases.push(() => resolve({ status: 204, message: '' })));
    };
    const { sink, registry } = startSink(
      { endpoint: [{ url: 'http://loki.invalid/push', batch_wait: '0s', queue_config: { capacity: '8B' } }] },
      { transport },
    );
    const answers: string[] = [];
    sink.next(recordedBatch('first', [entryOf('12345678')], answers));
    await eventually(() => requests.length === 1, 5000, 'the first push');
    sink.next(recordedBatch('second', [entryOf('abc')], answers));
    await turns(20);
    expect(answers).toEqual(['ack first']);
    expect(await metricValue(registry, 'logs_write_queued_bytes')).toBe(8);
    releases[0]!();
    await eventually(() => requests.length === 2, 5000, 'the second push');
    expect(answers).toEqual(['ack first', 'ack second']);
    releases[1]!();
    await sink.stop();
    expect(requests).toEqual([['12345678'], ['abc']]);
  });
});

describe('lokiWrite write-ahead log', () => {
  const walDir = () => mkdtempSync(join(tmpdir(), 'rivulet-loki-sink-wal-'));
  const walOptions = (url: string, dir: string): LokiWriteOptions => ({
    endpoint: [
      {
        url,
        name: 'main',
        batch_wait: '0s',
        min_backoff_period: '20ms',
        max_backoff_period: '50ms',
        max_backoff_retries: 0,
        queue_config: { drain_timeout: '200ms' },
      },
    ],
    wal: { enabled: true, dir },
  });

  it('keeps what it acknowledged through a stop while Loki is down, and a new sink on the same dir delivers it once', async () => {
    const loki = await fakeLoki();
    await loki.down();
    const dir = walDir();
    const first = startSink(walOptions(loki.url, dir));
    const { source, send } = testSource();
    source.subscribe(first.sink);
    for (let i = 0; i < 3; i++) await send([entryOf(`line-${i}`, { app: 'a' })]);
    await source.stop();
    await first.sink.stop();
    expect(await metricValue(first.registry, 'logs_write_dropped_entries_total')).toBe(0);
    expect(first.logs).toContain(
      'warn entries not delivered before drain_timeout stay in the write-ahead log for the next start ' +
        `{"component":"to-loki","host":"127.0.0.1:${loki.port}","records":3}`,
    );
    await loki.up();
    const second = startSink(walOptions(loki.url, dir));
    await eventually(() => loki.lines().length === 3, 5000, 'the replay');
    await second.sink.stop();
    expect(loki.lines()).toEqual(['line-0', 'line-1', 'line-2']);
    expect(await metricValue(second.registry, 'logs_write_sent_entries_total', { component_id: 'to-loki' })).toBe(3);
  });

  it('delivers on stop what it acknowledged while its appends were still being written: an Observable that completes at once', async () => {
    const loki = await fakeLoki();
    const { sink, registry } = startSink(walOptions(loki.url, walDir()));
    const answers: string[] = [];
    const lines = Array.from({ length: 20 }, (_, i) => `line-${i}`);
    // `from` completes right after its last batch, so stop begins while those appends are under way.
    from(lines.map((line) => recordedBatch(line, [entryOf(line)], answers))).subscribe(sink);
    await sink.stop();
    expect(answers).toEqual(lines.map((line) => `ack ${line}`));
    expect(loki.lines()).toEqual(lines);
    expect(await metricValue(registry, 'logs_write_sent_entries_total', { component_id: 'to-loki' })).toBe(20);
  });

  it('refuses a batch with RetryLaterError while the log’s disk is full, having kept every batch it acknowledged', async () => {
    const loki = await fakeLoki();
    await loki.down();
    const dir = walDir();
    const disk = fullDisk(dir, 40 * 1024);
    const { sink } = startSink(walOptions(loki.url, dir), { openFile: disk.openFile });
    const answers: string[] = [];
    const errors: unknown[] = [];
    for (let i = 0; i < 200 && errors.length === 0; i++) {
      const answered = new Promise<void>((resolve) => {
        const batch = recordedBatch(`${i}`, [entryOf(`line-${i}-${'x'.repeat(2000)}`)], answers, errors);
        sink.next({ ...batch, ack: () => resolve(batch.ack()), nack: (error) => resolve(batch.nack(error)) });
      });
      await answered;
    }
    const acknowledged = answers.filter((a) => a.startsWith('ack')).length;
    expect(acknowledged).toBeGreaterThan(10);
    expect(answers.at(-1)).toBe(`nack ${acknowledged}: the write-ahead log’s disk is full (ENOSPC)`);
    expect(errors[0]).toBeInstanceOf(RetryLaterError);
    await sink.stop();
    await loki.up();
    disk.setCap(1 << 30);
    const next = startSink(walOptions(loki.url, dir));
    await eventually(() => loki.lines().length === acknowledged, 5000, 'the replay');
    await next.sink.stop();
    expect(loki.lines()).toEqual(Array.from({ length: acknowledged }, (_, i) => `line-${i}-${'x'.repeat(2000)}`));
  });
});

describe('lokiWrite options', () => {
  const messagesOf = (fn: () => unknown): string[] => {
    try {
      fn();
    } catch (err) {
      return err instanceof ConfigErrors ? err.errors.map((e) => e.message) : [(err as Error).message];
    }
    return [];
  };

  it('refuses invalid options with the texts a config gets, without positions', () => {
    expect(messagesOf(() => lokiWrite({} as LokiWriteOptions))).toEqual(['logs.write: missing required block "endpoint"']);
    expect(messagesOf(() => lokiWrite({ endpoint: [] }))).toEqual(['logs.write: missing required block "endpoint"']);
    expect(messagesOf(() => lokiWrite({ endpoint: [{ url: 'http://a/push' }], externalLabels: {} } as LokiWriteOptions))).toEqual([
      'logs.write: unrecognized attribute name "externalLabels"',
    ]);
    expect(
      messagesOf(() =>
        lokiWrite({ endpoint: [{ url: 'ftp://x', bearer_token: 'a', bearer_token_file: '/nonexistent', batch_size: '1kB' }] }),
      ),
    ).toEqual([
      'logs.write > endpoint: url must use http or https, got "ftp://x"',
      'logs.write > endpoint: at most one of basic_auth, bearer_token and bearer_token_file may be set',
      "logs.write > endpoint: reading bearer_token_file: ENOENT: no such file or directory, open '/nonexistent'",
      'logs.write > endpoint: attribute "batch_size": units: unknown unit kB in 1kB',
    ]);
    expect(messagesOf(() => lokiWrite({ endpoint: [{ url: 'http://a/push', batch_wait: 'soon' }] }))).toEqual([
      'logs.write > endpoint: attribute "batch_wait": time: invalid duration "soon"',
    ]);
    expect(messagesOf(() => lokiWrite({ endpoint: [{ url: 'http://a/push' }], wal: { enabled: true } }))).toEqual([
      'logs.write > wal: dir must be set when the wal is enabled',
    ]);
    expect(
      messagesOf(() =>
        lokiWrite({ endpoint: [{ url: 'http://a/push' }], wal: { enabled: true, dir: '/tmp/w', fsync: 'sometimes' as 'never' } }),
      ),
    ).toEqual(['logs.write > wal: attribute "fsync": invalid value "sometimes", expected one of "always", "never"']);
    expect(
      messagesOf(() =>
        lokiWrite({ endpoint: [{ url: 'http://a/push' }, { url: 'http://a/push' }], wal: { enabled: true, dir: '/tmp/w' } }),
      ),
    ).toEqual([
      expect.stringMatching(
        /^logs\.write > wal: two endpoints would share the write-ahead log \/tmp\/w\/url-[0-9a-f]{16}; give them distinct names$/,
      ),
    ]);
  });

  it('applies updated options to the next batch, and refuses a changed wal or invalid options, keeping the old ones', async () => {
    const loki = await fakeLoki();
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-loki-sink-update-'));
    const options = (cluster: string, url = loki.url): LokiWriteOptions => ({
      endpoint: [{ url, name: 'main', batch_wait: '0s' }],
      external_labels: { cluster },
      wal: { enabled: true, dir },
    });
    const { sink } = startSink(options('eu'));
    expect(sink.health().state).toBe('healthy');
    await sink.send([entryOf('before', { app: 'a' })]);
    await eventually(() => loki.accepted.length === 1, 5000, 'the first push');
    sink.update(options('us'));
    expect(messagesOf(() => sink.update({ ...options('ap'), wal: { enabled: true, dir, fsync: 'never' } }))).toEqual([
      'logs.write: the wal block cannot change while the component runs',
    ]);
    expect(messagesOf(() => sink.update(options('ap', 'ftp://x')))).toEqual([
      'logs.write > endpoint: url must use http or https, got "ftp://x"',
    ]);
    await sink.send([entryOf('after', { app: 'a' })]);
    await eventually(() => loki.accepted.length === 2, 5000, 'the second push');
    expect(loki.accepted.map((p) => p.streams.map((s) => [s.labels, s.entries.map((e) => e.line)]))).toEqual([
      [[{ app: 'a', cluster: 'eu' }, ['before']]],
      [[{ app: 'a', cluster: 'us' }, ['after']]],
    ]);
  });
});
