import { afterEach, describe, expect, it } from 'vitest';
import type { Entry } from '../../../core/entry.js';
import { RetryLaterError } from '../../../core/receiver.js';
import { closeShardPairs, shardPair as pair } from './shard-pair.js';

afterEach(closeShardPairs);

const entry = (app: string, line: string): Entry => ({
  labels: { app },
  line,
  timestamp: 1_700_000_000_000_000_000n,
  structuredMetadata: [{ name: 'trace_id', value: 't1' }],
  extracted: {},
});

describe('the ports between shards', () => {
  it('deliver entries to the component on the owning shard, in the order they were sent, and resolve once it took them', async () => {
    const [a, b] = pair();
    const taken: string[] = [];
    b.serveEntries('logs.process.p', async (entries) => {
      taken.push(...entries.map((e) => `${e.labels.app} ${e.line} ${e.structuredMetadata[0]!.value} ${e.timestamp}`));
    });
    await Promise.all([
      a.deliver(1, 'logs.process.p', [entry('x', 'one'), entry('y', 'two')]),
      a.deliver(1, 'logs.process.p', [entry('x', 'three')]),
    ]);
    expect(taken).toEqual(['x one t1 1700000000000000000', 'y two t1 1700000000000000000', 'x three t1 1700000000000000000']);
  });

  it('hand a shard its own part without crossing', async () => {
    const [a] = pair();
    let taken: Entry[] = [];
    a.serveEntries('logs.process.p', async (entries) => {
      taken = entries;
    });
    const own = [entry('x', 'one')];
    await a.deliver(0, 'logs.process.p', own);
    expect(taken).toBe(own);
  });

  it('bring back a push-back as a RetryLaterError with its text, and any other failure as an error', async () => {
    const [a, b] = pair();
    b.serveEntries('logs.write.full', () => Promise.reject(new RetryLaterError('the write-ahead log is full')));
    b.serveEntries('logs.write.broken', () => Promise.reject(new Error('it broke')));
    const full = a.deliver(1, 'logs.write.full', [entry('x', 'one')]);
    await expect(full).rejects.toBeInstanceOf(RetryLaterError);
    await expect(full).rejects.toThrow('the write-ahead log is full');
    const broken = a.deliver(1, 'logs.write.broken', [entry('x', 'one')]);
    await expect(broken).rejects.not.toBeInstanceOf(RetryLaterError);
    await expect(broken).rejects.toThrow('it broke');
    await expect(a.deliver(1, 'logs.process.gone', [entry('x', 'one')])).rejects.toThrow('logs.process.gone takes no entries on shard 1');
  });

  it('answer a body for a source that stopped taking them 503, as a stopping source does', async () => {
    const [a] = pair();
    const claim = { bound: new SharedArrayBuffer(16), held: 1 };
    const undo = a.serveBodies('logs.source.api.in', async () => ({ entries: 3 }));
    expect(await a.takeBody('logs.source.api.in', new Uint8Array(1), {}, claim)).toEqual({ entries: 3 });
    undo();
    expect(await a.takeBody('logs.source.api.in', new Uint8Array(1), {}, claim)).toEqual({
      entries: 0,
      error: { status: 503, reason: 'shutting_down', message: 'the server is shutting down' },
    });
  });
});
