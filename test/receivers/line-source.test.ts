import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { pumpLines } from '../../receivers/line-source.js';
import { charactersScanned } from '../support/characters-scanned.js';
import { eventually, gate, recordingReceiver } from './loki/harness.js';

describe('pumpLines', () => {
  it('forwards the complete lines of each chunk at once, without waiting for more input', async () => {
    const stream = new PassThrough();
    const receiver = recordingReceiver();
    const abort = new AbortController();
    const done = pumpLines(stream, { job: 'stdin' }, new ManualClock(5n), () => [receiver], abort.signal);
    stream.write('first\nsec');
    await eventually(() => receiver.entries.length === 1);
    expect(receiver.entries[0]).toEqual({ labels: { job: 'stdin' }, line: 'first', timestamp: 5n, structuredMetadata: [], extracted: {} });
    stream.write('ond\r\nthird');
    await eventually(() => receiver.entries.length === 2);
    stream.end();
    expect(await done).toBe(3);
    expect(receiver.entries.map((e) => e.line)).toEqual(['first', 'second', 'third']);
  });

  it('keeps multi-byte characters split across chunks whole', async () => {
    const stream = new PassThrough();
    const receiver = recordingReceiver();
    const done = pumpLines(stream, {}, new ManualClock(0n), () => [receiver], new AbortController().signal);
    const bytes = Buffer.from('héllo\n');
    stream.write(bytes.subarray(0, 2));
    stream.end(bytes.subarray(2));
    await done;
    expect(receiver.entries.map((e) => e.line)).toEqual(['héllo']);
  });

  it('reads no further while the receivers have not taken the last lines over', async () => {
    const stream = new PassThrough({ highWaterMark: 16 });
    const hold = gate();
    const receiver = recordingReceiver({ hold: hold.wait });
    const done = pumpLines(stream, {}, new ManualClock(0n), () => [receiver], new AbortController().signal);
    stream.write('a\n');
    await eventually(() => receiver.calls() === 1);
    stream.write('b\n');
    await new Promise((r) => setTimeout(r, 30));
    expect(receiver.calls()).toBe(1);
    hold.open();
    stream.end();
    await done;
    expect(receiver.entries.map((e) => e.line)).toEqual(['a', 'b']);
  });

  it('stops reading when aborted but still sends what it had read', async () => {
    const stream = new PassThrough();
    const receiver = recordingReceiver();
    const abort = new AbortController();
    const done = pumpLines(stream, {}, new ManualClock(0n), () => [receiver], abort.signal);
    stream.write('read\nunfinished');
    await eventually(() => receiver.entries.length === 1);
    abort.abort();
    expect(await done).toBe(2);
    stream.write('never\n');
    expect(receiver.entries.map((e) => e.line)).toEqual(['read', 'unfinished']);
  });

  it('reads a line of many chunks looking at each character a bounded number of times', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const receiver = recordingReceiver();
    const scanned = await charactersScanned(async () => {
      const stream = new PassThrough();
      const done = pumpLines(stream, {}, new ManualClock(0n), () => [receiver], new AbortController().signal);
      for (let i = 0; i < 128; i++) {
        stream.write(chunk);
        // One chunk at a time, as a slow writer delivers them.
        await new Promise((r) => setImmediate(r));
      }
      stream.end('\r\nnext');
      await done;
    });
    expect(receiver.entries.map((e) => e.line.length)).toEqual([128 * chunk.length, 4]);
    expect(scanned).toBeLessThanOrEqual(2 * 128 * chunk.length);
  });
});
