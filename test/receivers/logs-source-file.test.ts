import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigErrors } from '../../lib/config/errors.js';
import type { LogsReceiver } from '../../core/receiver.js';
import { validatedArgs } from '../../core/runtime/component.js';
import { LogsSourceFile, logsSourceFileComponent } from '../../receivers/logs-source-file.js';
import { componentArgs, eventually, gate, recordingReceiver, testContext, type RecordingReceiver } from './loki/harness.js';

/** The component's arguments for the block in `text`, validated as its build validates them. */
const fileArgs = (text: string, receivers: readonly LogsReceiver[], file?: string) =>
  validatedArgs(logsSourceFileComponent, componentArgs(logsSourceFileComponent, text, receivers, file), { id: 'logs.source.file.test' });

const root = mkdtempSync(join(tmpdir(), 'rivulet-file-source-'));
let dirCount = 0;
function freshDir(): string {
  const dir = join(root, `d${dirCount++}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

const running: LogsSourceFile[] = [];
afterEach(async () => {
  for (const source of running.splice(0)) await source.stop();
});

const FAST =
  'file_watch {\n    min_poll_frequency = "20ms"\n    max_poll_frequency = "40ms"\n  }\n  file_match {\n    sync_period = "50ms"\n  }';

async function startSource(body: string, receiver: RecordingReceiver): Promise<LogsSourceFile> {
  const text = `logs.source.file "test" {\n  ${body}\n  ${FAST}\n  forward_to = [r0]\n}\n`;
  const source = new LogsSourceFile(fileArgs(text, [receiver]), testContext('logs.source.file.test'));
  running.push(source);
  await source.start();
  return source;
}

async function stopSource(source: LogsSourceFile): Promise<void> {
  running.splice(running.indexOf(source), 1);
  await source.stop();
}

const lines = (receiver: RecordingReceiver) => receiver.entries.map((e) => e.line);

describe('logs.source.file tailing', () => {
  it('reads existing lines, then lines appended later, labelled with filename and target labels', async () => {
    const dir = freshDir();
    const file = join(dir, 'app.log');
    writeFileSync(file, 'one\r\ntwo\n');
    const receiver = recordingReceiver();
    await startSource(
      `targets = [{ "__path__" = ${JSON.stringify(join(dir, '*.log'))}, job = "app", "__meta" = "x" }]\n  labels = { env = "test" }`,
      receiver,
    );
    await eventually(() => receiver.entries.length === 2, 5000, 'the existing lines');
    appendFileSync(file, 'three\n');
    await eventually(() => receiver.entries.length === 3, 5000, 'the appended line');
    expect(lines(receiver)).toEqual(['one', 'two', 'three']);
    expect(receiver.entries[0]!.labels).toEqual({ env: 'test', job: 'app', filename: file });
  });

  it('sends an unfinished last line only once its newline arrives', async () => {
    const dir = freshDir();
    const file = join(dir, 'partial.log');
    writeFileSync(file, 'complete\nhalf');
    const receiver = recordingReceiver();
    await startSource(`path = ${JSON.stringify(file)}`, receiver);
    await eventually(() => receiver.entries.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(lines(receiver)).toEqual(['complete']);
    appendFileSync(file, ' a line\n');
    await eventually(() => receiver.entries.length === 2);
    expect(lines(receiver)).toEqual(['complete', 'half a line']);
  });

  it('finds files created after it started and skips excluded ones', async () => {
    const dir = freshDir();
    const receiver = recordingReceiver();
    await startSource(
      `targets = [{ "__path__" = ${JSON.stringify(join(dir, '**/*.log'))}, "__path_exclude__" = ${JSON.stringify(join(dir, '**/skip-*.log'))} }]`,
      receiver,
    );
    mkdirSync(join(dir, 'nested', 'deeper'), { recursive: true });
    writeFileSync(join(dir, 'nested', 'deeper', 'a.log'), 'from a\n');
    writeFileSync(join(dir, 'skip-me.log'), 'skipped\n');
    writeFileSync(join(dir, 'b.txt'), 'not matched\n');
    await eventually(() => receiver.entries.length === 1, 5000, 'the new file');
    await new Promise((r) => setTimeout(r, 150));
    expect(lines(receiver)).toEqual(['from a']);
  });

  it('starts files found at startup at their end with tail_from_end', async () => {
    const dir = freshDir();
    const file = join(dir, 'tail.log');
    writeFileSync(file, 'old\n');
    const receiver = recordingReceiver();
    await startSource(`path = ${JSON.stringify(file)}\n  tail_from_end = true`, receiver);
    await new Promise((r) => setTimeout(r, 100));
    appendFileSync(file, 'new\n');
    await eventually(() => receiver.entries.length === 1);
    expect(lines(receiver)).toEqual(['new']);
  });

  it('reads the next batch only after the previous one was taken over, batches doubling from 64 lines up to 1000', async () => {
    const dir = freshDir();
    const file = join(dir, 'slow.log');
    writeFileSync(file, Array.from({ length: 2500 }, (_, i) => `line ${i}\n`).join(''));
    const hold = gate();
    const sizes: number[] = [];
    const receiver = recordingReceiver({ hold: hold.wait });
    const send = receiver.send.bind(receiver);
    receiver.send = (batch) => {
      sizes.push(batch.length);
      return send(batch);
    };
    await startSource(`path = ${JSON.stringify(file)}`, receiver);
    await eventually(() => receiver.calls() === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.calls()).toBe(1);
    hold.open();
    await eventually(() => receiver.entries.length === 2500);
    // Taken over well within a sixteenth of the default 10s positions_sync_period: no batch shrinks.
    expect(sizes).toEqual([64, 128, 256, 512, 1000, 540]);
  });
});

describe('logs.source.file rotation and restarts', () => {
  it('loses and repeats nothing across rename rotations during writes, even when rotated names match', async () => {
    const dir = freshDir();
    const file = join(dir, 'app.log');
    writeFileSync(file, '');
    const receiver = recordingReceiver();
    await startSource(`path = ${JSON.stringify(join(dir, 'app.log*'))}`, receiver);
    const total = 3000;
    for (let i = 0; i < total; i++) {
      appendFileSync(file, `line ${i}\n`);
      if (i % 500 === 499) {
        renameSync(file, join(dir, `app.log.${i}`));
        writeFileSync(file, '');
      }
      if (i % 100 === 0) await new Promise((r) => setImmediate(r));
    }
    await eventually(() => receiver.entries.length >= total, 10_000, 'every line');
    await new Promise((r) => setTimeout(r, 150));
    const got = lines(receiver);
    expect(got.length).toBe(total);
    expect(new Set(got).size).toBe(total);
    expect([...got].sort((a, b) => Number(a.split(' ')[1]) - Number(b.split(' ')[1]))).toEqual(
      Array.from({ length: total }, (_, i) => `line ${i}`),
    );
  });

  it('reads a copytruncated file again from its start, even when it regrew past the old offset', async () => {
    const dir = freshDir();
    const file = join(dir, 'copy.log');
    writeFileSync(file, 'a1\na2\n');
    const receiver = recordingReceiver();
    await startSource(`path = ${JSON.stringify(file)}`, receiver);
    await eventually(() => receiver.entries.length === 2);
    copyFileSync(file, `${file}.1`);
    truncateSync(file, 0);
    appendFileSync(file, 'b1 is a longer line than before\nb2\n');
    await eventually(() => receiver.entries.length === 4);
    truncateSync(file, 0);
    appendFileSync(file, 'c1\n');
    await eventually(() => receiver.entries.length === 5);
    await new Promise((r) => setTimeout(r, 100));
    expect(lines(receiver)).toEqual(['a1', 'a2', 'b1 is a longer line than before', 'b2', 'c1']);
  });

  it('resumes from the positions file after a restart: no line lost, none repeated', async () => {
    const dir = freshDir();
    const file = join(dir, 'app.log');
    const positions = join(dir, 'state', 'positions.json');
    writeFileSync(file, 'first\nsecond\n');
    const before = recordingReceiver();
    const source = await startSource(`path = ${JSON.stringify(file)}\n  positions_file = ${JSON.stringify(positions)}`, before);
    await eventually(() => before.entries.length === 2);
    await stopSource(source);
    const saved = JSON.parse(readFileSync(positions, 'utf8')) as { version: number; files: Record<string, { offset: string }> };
    expect(saved.version).toBe(1);
    expect(saved.files[file]!.offset).toBe('13');
    appendFileSync(file, 'third\n');
    const after = recordingReceiver();
    await startSource(`path = ${JSON.stringify(file)}\n  positions_file = ${JSON.stringify(positions)}`, after);
    await eventually(() => after.entries.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect([...lines(before), ...lines(after)]).toEqual(['first', 'second', 'third']);
  });

  it('loses and repeats nothing when it restarts between rotations while lines keep coming', async () => {
    const dir = freshDir();
    const file = join(dir, 'app.log');
    const positions = join(dir, 'positions.json');
    writeFileSync(file, '');
    const config = `path = ${JSON.stringify(join(dir, 'app.log*'))}\n  positions_file = ${JSON.stringify(positions)}`;
    const received: string[] = [];
    let written = 0;
    const write = async (count: number) => {
      for (let k = 0; k < count; k++, written++) {
        appendFileSync(file, `line ${written}\n`);
        if (written % 300 === 299) {
          renameSync(file, join(dir, `app.log.${written}`));
          writeFileSync(file, '');
        }
        if (written % 50 === 0) await new Promise((r) => setImmediate(r));
      }
    };
    for (let round = 0; round < 3; round++) {
      const receiver = recordingReceiver();
      const source = await startSource(config, receiver);
      await write(700);
      const target = written;
      await eventually(() => received.length + receiver.entries.length >= target, 10_000, `round ${round}`);
      await stopSource(source);
      received.push(...lines(receiver));
      // Lines written while it is down must be picked up by the next round.
      await write(100);
    }
    const final = recordingReceiver();
    await startSource(config, final);
    await eventually(() => received.length + final.entries.length >= written, 10_000, 'the last lines');
    await new Promise((r) => setTimeout(r, 150));
    received.push(...lines(final));
    expect(received.length).toBe(written);
    expect(new Set(received).size).toBe(written);
  });

  it('reads a file replaced while it was stopped from its start', async () => {
    const dir = freshDir();
    const file = join(dir, 'app.log');
    const positions = join(dir, 'positions.json');
    writeFileSync(file, 'old-1\nold-2\n');
    const before = recordingReceiver();
    const source = await startSource(`path = ${JSON.stringify(file)}\n  positions_file = ${JSON.stringify(positions)}`, before);
    await eventually(() => before.entries.length === 2);
    await stopSource(source);
    renameSync(file, `${file}.1`);
    writeFileSync(file, 'new-1\n');
    const after = recordingReceiver();
    await startSource(`path = ${JSON.stringify(file)}\n  positions_file = ${JSON.stringify(positions)}`, after);
    await eventually(() => after.entries.length === 1);
    expect(lines(after)).toEqual(['new-1']);
  });

  it('follows a file that is deleted and created again', async () => {
    const dir = freshDir();
    const file = join(dir, 'gone.log');
    writeFileSync(file, 'before\n');
    const receiver = recordingReceiver();
    await startSource(`path = ${JSON.stringify(file)}`, receiver);
    await eventually(() => receiver.entries.length === 1);
    rmSync(file);
    await new Promise((r) => setTimeout(r, 100));
    writeFileSync(file, 'after\n');
    await eventually(() => receiver.entries.length === 2);
    expect(lines(receiver)).toEqual(['before', 'after']);
  });
});

describe('logs.source.file positions', () => {
  async function startWithContext(body: string, receiver: RecordingReceiver) {
    const ctx = testContext('logs.source.file.test');
    const text = `logs.source.file "test" {\n  ${body}\n  ${FAST}\n  forward_to = [r0]\n}\n`;
    const source = new LogsSourceFile(fileArgs(text, [receiver]), ctx);
    running.push(source);
    await source.start();
    return { source, ctx };
  }
  const savedOffset = (positions: string, file: string): string | undefined => {
    try {
      return (JSON.parse(readFileSync(positions, 'utf8')) as { files: Record<string, { offset: string }> }).files[file]?.offset;
    } catch {
      return undefined;
    }
  };

  it('starts clean on an empty positions file, saying so, and stays healthy', async () => {
    const dir = freshDir();
    const file = join(dir, 'app.log');
    const positions = join(dir, 'positions.json');
    writeFileSync(file, 'one\ntwo\n');
    writeFileSync(positions, '');
    const receiver = recordingReceiver();
    const { source, ctx } = await startWithContext(
      `path = ${JSON.stringify(file)}\n  positions_file = ${JSON.stringify(positions)}`,
      receiver,
    );
    await eventually(() => receiver.entries.length === 2);
    expect(lines(receiver)).toEqual(['one', 'two']);
    expect(source.health().state).toBe('healthy');
    expect(ctx.logs).toContain(`warn positions file is empty, starting without positions {"file":${JSON.stringify(positions)}}`);
    await stopSource(source);
    expect(savedOffset(positions, file)).toBe('8');
  });

  it('reads a file whose saved offset is invalid from its start and saves a whole offset back', async () => {
    const dir = freshDir();
    const file = join(dir, 'app.log');
    const positions = join(dir, 'positions.json');
    writeFileSync(file, 'first\nsecond\n');
    const st = statSync(file, { bigint: true });
    for (const offset of ['1.5', '-6', 'six']) {
      writeFileSync(positions, JSON.stringify({ version: 1, files: { [file]: { offset, dev: String(st.dev), ino: String(st.ino) } } }));
      const receiver = recordingReceiver();
      const { source, ctx } = await startWithContext(
        `path = ${JSON.stringify(file)}\n  positions_file = ${JSON.stringify(positions)}`,
        receiver,
      );
      await eventually(() => receiver.entries.length === 2);
      expect(lines(receiver)).toEqual(['first', 'second']);
      expect(source.health().state).toBe('healthy');
      expect(ctx.logs.filter((l) => l.startsWith('warn dropping an invalid position'))).toHaveLength(1);
      await stopSource(source);
      expect(savedOffset(positions, file)).toBe('13');
    }
  });

  it('advances a saved position only once the receivers took the batch over', async () => {
    const dir = freshDir();
    const file = join(dir, 'app.log');
    const positions = join(dir, 'positions.json');
    writeFileSync(file, Array.from({ length: 1500 }, (_, i) => `line ${i}\n`).join(''));
    const hold = gate();
    const receiver = recordingReceiver({ hold: hold.wait });
    await startWithContext(
      `path = ${JSON.stringify(file)}\n  positions_file = ${JSON.stringify(positions)}\n  positions_sync_period = "20ms"`,
      receiver,
    );
    await eventually(() => savedOffset(positions, file) !== undefined, 5000, 'the first sync');
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.calls()).toBe(1);
    expect(savedOffset(positions, file)).toBe('0');
    hold.open();
    await eventually(() => savedOffset(positions, file) === String(statSync(file).size), 5000, 'the position of every line');
    expect(receiver.entries.length).toBe(1500);
  });

  it('writes positions every positions_sync_period while one long read is still going', async () => {
    const dir = freshDir();
    const file = join(dir, 'big.log');
    const positions = join(dir, 'positions.json');
    writeFileSync(file, Array.from({ length: 6000 }, (_, i) => `line ${i}\n`).join(''));
    const size = statSync(file).size;
    // A slow downstream: the whole file is one poll of six batches, 150 ms each.
    const receiver = recordingReceiver({ hold: () => new Promise((r) => setTimeout(r, 150)) });
    await startWithContext(
      `path = ${JSON.stringify(file)}\n  positions_file = ${JSON.stringify(positions)}\n  positions_sync_period = "50ms"`,
      receiver,
    );
    const seen = new Set<string>();
    await eventually(
      () => {
        const offset = savedOffset(positions, file);
        if (offset !== undefined) seen.add(offset);
        return offset === String(size);
      },
      10_000,
      'the last position',
    );
    // Every acknowledged batch boundary was written while the read went on, not only the end.
    const middle = [...seen].map(Number).filter((o) => o > 0 && o < size);
    expect(middle.length).toBeGreaterThanOrEqual(3);
  });
});

describe('logs.source.file max_line_size', () => {
  async function readWithLimit(limit: string, content: string): Promise<{ lines: string[]; metrics: string }> {
    const dir = freshDir();
    const file = join(dir, 'app.log');
    writeFileSync(file, content);
    const registry = new Registry();
    const receiver = recordingReceiver();
    const text = `logs.source.file "test" {\n  path = ${JSON.stringify(file)}\n  ${limit}\n  ${FAST}\n  forward_to = [r0]\n}\n`;
    const source = new LogsSourceFile(fileArgs(text, [receiver]), testContext('logs.source.file.test', { registry }));
    running.push(source);
    await source.start();
    await eventually(() => receiver.entries.some((e) => e.line === 'end'));
    const metrics = (await registry.metrics()).split('\n').filter((l) => /^logs_source_file_(dropped|mutated)/.test(l));
    return { lines: lines(receiver), metrics: metrics.map((l) => l.replace(JSON.stringify(file), 'FILE')).join('\n') };
  }

  it('drops lines longer than max_line_size and counts them and their bytes', async () => {
    const got = await readWithLimit('max_line_size = "1KiB"', `a\n${'x'.repeat(1025)}\n${'y'.repeat(1024)}\r\n${'z'.repeat(5000)}\nend\n`);
    expect(got.lines).toEqual(['a', 'y'.repeat(1024), 'end']);
    expect(got.metrics).toBe(
      [
        'logs_source_file_dropped_entries_total{component_id="logs.source.file.test",path=FILE,reason="line_too_long"} 2',
        'logs_source_file_dropped_bytes_total{component_id="logs.source.file.test",path=FILE,reason="line_too_long"} 6025',
      ].join('\n'),
    );
  });

  it('truncates them instead with max_line_size_truncate, counting the bytes cut off', async () => {
    const got = await readWithLimit('max_line_size = "4B"\n  max_line_size_truncate = true', 'abcdefgh\nabc\nabcd\nend\n');
    expect(got.lines).toEqual(['abcd', 'abc', 'abcd', 'end']);
    expect(got.metrics).toBe(
      [
        'logs_source_file_mutated_entries_total{component_id="logs.source.file.test",path=FILE,reason="line_too_long"} 1',
        'logs_source_file_mutated_bytes_total{component_id="logs.source.file.test",path=FILE,reason="line_too_long"} 4',
      ].join('\n'),
    );
  });
});

describe('logs.source.file config', () => {
  const errorsOf = (body: string): string[] => {
    try {
      new LogsSourceFile(fileArgs(`logs.source.file "test" {\n  ${body}\n  forward_to = []\n}\n`, [], 'f.alloy'), testContext('x'));
    } catch (err) {
      if (err instanceof ConfigErrors) return err.errors.map((e) => e.message);
      throw err;
    }
    return [];
  };

  it('needs a path or targets, and a __path__ in every target', () => {
    expect(errorsOf('')).toEqual(['f.alloy:1:1: logs.source.file "test": one of path and targets must be set']);
    expect(errorsOf('targets = [{ job = "x" }]')).toEqual(['f.alloy:2:3: logs.source.file "test": targets[0] has no __path__ label']);
  });

  it('rejects a positions_sync_period that is not positive', () => {
    expect(errorsOf('path = "x"\n  positions_sync_period = "0s"')).toEqual([
      'f.alloy:3:3: logs.source.file "test": positions_sync_period must be greater than 0',
    ]);
  });

  it('rejects a max_line_size that is not a size', () => {
    expect(errorsOf('path = "x"\n  max_line_size = "long"')).toEqual([
      'f.alloy:3:3: logs.source.file "test": attribute "max_line_size": units: invalid long',
    ]);
  });

  it('rejects poll and glob sync periods that are not positive, at their attributes', () => {
    expect(
      errorsOf('path = "x"\n  file_watch {\n    min_poll_frequency = "0s"\n  }\n  file_match {\n    sync_period = "-1s"\n  }'),
    ).toEqual([
      'f.alloy:4:5: logs.source.file "test" > file_watch: min_poll_frequency must be greater than 0',
      'f.alloy:7:5: logs.source.file "test" > file_match: sync_period must be greater than 0',
    ]);
  });

  it('rejects a max poll frequency below the min', () => {
    expect(errorsOf('path = "x"\n  file_watch {\n    min_poll_frequency = "1s"\n    max_poll_frequency = "10ms"\n  }')).toEqual([
      'f.alloy:5:5: logs.source.file "test" > file_watch: max_poll_frequency must not be less than min_poll_frequency',
    ]);
  });
});
