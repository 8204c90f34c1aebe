import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import type { LogBatch } from '../../core/delivery.js';
import { RetryLaterError } from '../../core/receiver.js';
import { ConfigErrors } from '../../lib/config/errors.js';
import { type FileTail, tailFiles, type TailFilesOptions } from '../../receivers/index.js';
import { eventually, metricValue } from './loki/harness.js';

const root = mkdtempSync(join(tmpdir(), 'rivulet-tail-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirCount = 0;
function freshDir(): string {
  const dir = join(root, `d${dirCount++}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A container runtime's log line (CRI format): every line of these files is 55 bytes with its newline. */
const criLine = (i: number) => `2026-11-29T03:00:00.${String(i).padStart(9, '0')}Z stdout F line ${String(i).padStart(4, '0')}`;
const criLines = (from: number, count: number) => Array.from({ length: count }, (_, k) => `${criLine(from + k)}\n`).join('');
const LINE_BYTES = criLine(0).length + 1;

const START_NS = 1_764_385_200_000_000_000n;
const SYNC_MS = 1000;

interface Tailing {
  readonly files: FileTail;
  readonly clock: ManualClock;
  readonly registry: Registry;
  readonly logs: string[];
  /** Every batch emitted, in order; none is answered until `ackAll`, unless `autoAck`. */
  readonly batches: LogBatch[];
  /** Acknowledges every batch so far and, from now on, each one as it comes. */
  ackAll(): void;
  completed(): boolean;
}

const running: Tailing[] = [];
afterEach(async () => {
  for (const t of running.splice(0)) {
    t.ackAll();
    await t.files.stop();
  }
});

/** Subscribes to tailFiles on virtual time, keeping every batch; `autoAck` acknowledges each at once. */
function tail(options: TailFilesOptions, autoAck = false): Tailing {
  const clock = new ManualClock(START_NS);
  const registry = new Registry();
  const logs: string[] = [];
  const files = tailFiles(
    { positions_sync_period: `${SYNC_MS}ms`, ...options },
    {
      id: 'logs.source.file.pods',
      clock,
      registry,
      log: (level, message, fields) => logs.push(`${level} ${message} ${JSON.stringify(fields)}`),
    },
  );
  const batches: LogBatch[] = [];
  let acking = autoAck;
  let completed = false;
  files.subscribe({
    next: (batch) => {
      batches.push(batch);
      if (acking) batch.ack();
    },
    complete: () => (completed = true),
  });
  const ackAll = () => {
    acking = true;
    for (const batch of batches) batch.ack();
  };
  const t = { files, clock, registry, logs, batches, ackAll, completed: () => completed };
  running.push(t);
  return t;
}

async function stop(t: Tailing): Promise<void> {
  running.splice(running.indexOf(t), 1);
  await t.files.stop();
}

function savedOffset(positions: string, file: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(positions, 'utf8')) as { files: Record<string, { offset: string }> }).files[file]?.offset;
  } catch {
    return undefined;
  }
}

/** Runs the positions timer and waits for the write to land. */
async function syncPositions(t: Tailing, positions: string, file: string, offset: string): Promise<void> {
  t.clock.advanceBy(SYNC_MS);
  await eventually(() => savedOffset(positions, file) === offset, 5000, `offset ${offset} saved`);
}

/** Lets real time pass for file reads that would happen if nothing held them. */
const settle = () => new Promise((r) => setTimeout(r, 100));

const linesOf = (batches: readonly LogBatch[]) => batches.flatMap((b) => b.entries.map((e) => e.line));

describe('tailFiles', () => {
  it('emits the lines of every matched file as batches labelled with the options labels, target labels and filename', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'a.log'), criLines(0, 2));
    writeFileSync(join(dir, 'b.log'), criLines(2, 1));
    writeFileSync(join(dir, 'skip.log'), criLines(3, 1));
    const t = tail(
      {
        targets: [{ __path__: join(dir, '*.log'), __path_exclude__: join(dir, 'skip.log'), namespace: 'shop' }],
        labels: { job: 'pods' },
      },
      true,
    );
    await eventually(() => t.batches.length === 2, 5000, 'a batch of each file');
    const entry = (i: number, file: string) => ({
      labels: { job: 'pods', namespace: 'shop', filename: join(dir, file) },
      line: criLine(i),
      timestamp: START_NS,
      structuredMetadata: [],
      extracted: {},
    });
    expect(t.batches.map((b) => b.entries)).toEqual([[entry(0, 'a.log'), entry(1, 'a.log')], [entry(2, 'b.log')]]);
    expect(t.files.health().state).toBe('healthy');
  });

  it('reads no second batch of a file while the first is unanswered, and saves its position only once it is acknowledged', async () => {
    const dir = freshDir();
    const file = join(dir, 'app.log');
    const positions = join(dir, 'positions.json');
    // 100 lines: a first batch of 64 (a file's first batch), then one of 36.
    writeFileSync(file, criLines(0, 100));
    const t = tail({ path: file, positions_file: positions });
    const series = { component_id: 'logs.source.file.pods', path: file };
    await eventually(() => t.batches.length === 1, 5000, 'the first batch');
    expect(t.batches[0]!.entries).toHaveLength(64);
    // The positions timer writes where reading started, not where the unanswered batch ends.
    await syncPositions(t, positions, file, '0');
    t.clock.advanceBy(SYNC_MS);
    await settle();
    expect(t.batches).toHaveLength(1);
    expect(savedOffset(positions, file)).toBe('0');
    expect(await metricValue(t.registry, 'logs_source_file_read_lines_total', series)).toBe(0);

    t.ackAll();
    await eventually(() => linesOf(t.batches).length === 100, 5000, 'the rest of the file');
    // The first batch took 2 s (of virtual time) against a sixteenth of positions_sync_period:
    // the next one holds what is taken over in that time (2 lines), then batches double again.
    expect(t.batches.map((b) => b.entries.length)).toEqual([64, 2, 4, 8, 16, 6]);
    await syncPositions(t, positions, file, String(100 * LINE_BYTES));
    expect(await metricValue(t.registry, 'logs_source_file_read_lines_total', series)).toBe(100);
    expect(await metricValue(t.registry, 'logs_source_file_file_bytes_total', series)).toBe(100 * LINE_BYTES);
    expect(await metricValue(t.registry, 'logs_source_file_files_active_total', { component_id: 'logs.source.file.pods' })).toBe(1);
    expect(linesOf(t.batches)).toEqual(Array.from({ length: 100 }, (_, i) => criLine(i)));
  });

  it('stops once the batch in flight is answered, writes the positions and completes; a new tailFiles resumes from them', async () => {
    const dir = freshDir();
    const file = join(dir, 'app.log');
    const positions = join(dir, 'positions.json');
    writeFileSync(file, criLines(0, 100));
    const first = tail({ path: file, positions_file: positions });
    await eventually(() => first.batches.length === 1, 5000, 'the first batch');
    let stopped = false;
    const stopping = stop(first).then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    expect(first.completed()).toBe(false);
    expect(savedOffset(positions, file)).toBeUndefined();

    first.batches[0]!.ack();
    await stopping;
    expect(first.completed()).toBe(true);
    // Reading ended after the answered batch: the 36 lines after it are left for the next run.
    expect(first.batches).toHaveLength(1);
    expect(savedOffset(positions, file)).toBe(String(64 * LINE_BYTES));

    appendFileSync(file, criLines(100, 1));
    const second = tail({ path: file, positions_file: positions }, true);
    await eventually(() => linesOf(second.batches).length === 37, 5000, 'the rest of the file');
    await settle();
    expect([...linesOf(first.batches), ...linesOf(second.batches)]).toEqual(Array.from({ length: 101 }, (_, i) => criLine(i)));
    await stop(second);
    expect(savedOffset(positions, file)).toBe(String(101 * LINE_BYTES));
  });

  it('stops on unsubscribe without waiting, writing the positions once the batch still held is answered', async () => {
    const dir = freshDir();
    const file = join(dir, 'app.log');
    const positions = join(dir, 'positions.json');
    writeFileSync(file, criLines(0, 100));
    const files = tailFiles(
      { path: file, positions_file: positions },
      { clock: new ManualClock(), registry: new Registry(), log: () => {} },
    );
    const batches: LogBatch[] = [];
    const subscription = files.subscribe((batch) => batches.push(batch));
    await eventually(() => batches.length === 1, 5000, 'the first batch');
    subscription.unsubscribe();
    await settle();
    expect(savedOffset(positions, file)).toBeUndefined();
    batches[0]!.ack();
    await eventually(() => savedOffset(positions, file) === String(64 * LINE_BYTES), 5000, 'the positions');
    expect(batches).toHaveLength(1);
  });

  it('reads a refused batch again on a later poll, reporting the failure meanwhile', async () => {
    const dir = freshDir();
    const file = join(dir, 'app.log');
    writeFileSync(file, criLines(0, 3));
    const t = tail({ path: file, file_watch: { min_poll_frequency: '100ms', max_poll_frequency: '400ms' } });
    await eventually(() => t.batches.length === 1, 5000, 'the first batch');
    t.batches[0]!.nack(new RetryLaterError('the pipeline is full'));
    await eventually(() => t.files.health().state === 'unhealthy', 5000, 'the failure');
    expect(t.files.health().message).toBe(`reading ${file}: the pipeline is full`);
    expect(t.logs).toContain(
      `error reading file failed ${JSON.stringify({ component: 'logs.source.file.pods', path: file, error: 'the pipeline is full' })}`,
    );
    await settle();
    expect(t.batches).toHaveLength(1);

    // The failed poll backs off to twice the min interval before reading the same lines again.
    t.clock.advanceBy(199);
    await settle();
    expect(t.batches).toHaveLength(1);
    t.clock.advanceBy(1);
    await eventually(() => t.batches.length === 2, 5000, 'the batch read again');
    expect(t.batches[1]!.entries.map((e) => e.line)).toEqual([criLine(0), criLine(1), criLine(2)]);
    t.batches[1]!.ack();
    t.clock.advanceBy(100);
    await eventually(() => t.files.health().state === 'healthy', 5000, 'health back');
  });

  it('applies new options with update, but keeps its positions file', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'a.log'), criLines(0, 1));
    writeFileSync(join(dir, 'b.log'), criLines(1, 1));
    const t = tail({ path: join(dir, 'a.log'), positions_file: join(dir, 'positions.json') }, true);
    await eventually(() => t.batches.length === 1, 5000, 'a.log');
    t.files.update({ path: join(dir, 'b.log'), positions_file: join(dir, 'positions.json'), labels: { job: 'b' } });
    // The new glob is expanded on the next turn of the loop, which may be asleep on virtual time.
    await eventually(
      () => {
        t.clock.advanceBy(250);
        return t.batches.length === 2;
      },
      5000,
      'b.log',
    );
    expect(t.batches[1]!.entries.map((e) => [e.line, e.labels])).toEqual([[criLine(1), { job: 'b', filename: join(dir, 'b.log') }]]);
    expect(() => t.files.update({ path: join(dir, 'b.log'), positions_file: join(dir, 'other.json') })).toThrow(
      'logs.source.file: positions_file cannot change while the component runs',
    );
  });

  it('rejects invalid options with the component errors', () => {
    const errorsOf = (options: Record<string, unknown>): string[] => {
      try {
        tailFiles(options as TailFilesOptions);
      } catch (err) {
        if (err instanceof ConfigErrors) return err.errors.map((e) => e.message);
        return [(err as Error).message];
      }
      return [];
    };
    expect(errorsOf({})).toEqual(['logs.source.file: one of path and targets must be set']);
    expect(errorsOf({ targets: [{ job: 'x' }] })).toEqual(['logs.source.file: targets[0] has no __path__ label']);
    expect(errorsOf({ path: 'x', max_line_size: 'long', positions_sync_period: '0s' })).toEqual([
      'logs.source.file: positions_sync_period must be greater than 0',
      'logs.source.file: attribute "max_line_size": units: invalid long',
    ]);
    expect(errorsOf({ path: 'x', file_watch: { min_poll_frequency: '1s', max_poll_frequency: '10ms' } })).toEqual([
      'logs.source.file > file_watch: max_poll_frequency must not be less than min_poll_frequency',
    ]);
    expect(errorsOf({ path: 'x', file_match: { sync_period: 'soon' } })).toEqual([
      'logs.source.file > file_match: attribute "sync_period": time: invalid duration "soon"',
    ]);
    expect(errorsOf({ path: 'x', forward_to: [] })).toEqual(['logs.source.file: unrecognized attribute name "forward_to"']);
  });

  it('is unhealthy and tails nothing when the positions file is not the format', async () => {
    const dir = freshDir();
    const file = join(dir, 'app.log');
    const positions = join(dir, 'positions.json');
    writeFileSync(file, criLines(0, 1));
    writeFileSync(positions, '{"version":2}');
    const t = tail({ path: file, positions_file: positions });
    await eventually(() => t.files.health().state === 'unhealthy', 5000, 'the failure');
    expect(t.files.health().message).toBe(`positions file ${positions} has an unknown format`);
    await settle();
    expect(t.batches).toHaveLength(0);
    await stop(t);
    expect(t.completed()).toBe(true);
    expect(statSync(positions).size).toBe('{"version":2}'.length);
  });
});
