import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { LogsProcessor } from '../../../core/components/logs-processor.js';
import type { Entry } from '../../../core/entry.js';
import type { LogsReceiver } from '../../../core/receiver.js';
import { standaloneContext } from '../../../core/runtime/standalone.js';
import type { ShardPeers } from '../../../core/shard-context.js';
import { multiline } from '../../../operators/index.js';

const entry = (app: string, line: string): Entry => ({ labels: { app }, line, timestamp: 1n, structuredMetadata: [], extracted: {} });

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** The first of two shards, whose processor owns every stream (its deliveries come back to itself). */
function firstShard() {
  let serve: ((entries: Entry[]) => Promise<void>) | undefined;
  const holds: Array<() => Promise<void>> = [];
  const peers: ShardPeers = {
    index: 0,
    count: 2,
    deliver: (_shard, _id, entries) => serve!(entries),
    serveEntries: (_id, send) => {
      serve = send;
      return () => {};
    },
    serveBodies: () => () => {},
    holdReloadAnswer: (settled) => {
      holds.push(settled);
      return () => holds.splice(holds.indexOf(settled), 1);
    },
  };
  return { peers, reloadSettled: () => Promise.all(holds.map((settled) => settled())) };
}

describe('a processor on a shard, reloaded', () => {
  it('holds the reload answer until the blocks its replaced stage list flushed were handed on', async () => {
    const shard = firstShard();
    // A receiver that takes each batch over only when told to.
    const taken: string[][] = [];
    const takeOver: Array<() => void> = [];
    const receiver: LogsReceiver = {
      send: (entries) =>
        new Promise<void>((resolve) => {
          taken.push(entries.map((e) => e.line));
          takeOver.push(resolve);
        }),
    };
    const ctx = { ...standaloneContext('logs.process.p', { clock: new ManualClock(), registry: new Registry() }), shard: shard.peers };
    const processor = new LogsProcessor([multiline({ firstline: '^start' }).spec], 'multiline', ctx, () => [receiver]);
    await processor.send([entry('a', 'start a'), entry('a', ' a2')]);
    await processor.send([entry('b', 'start b'), entry('b', ' b2')]);
    expect(taken).toEqual([]);

    processor.replace([], '');
    let answered = false;
    const answer = shard.reloadSettled().then(() => (answered = true));
    await turn();
    // Each flushed block goes on by itself, the second once the first was taken over.
    expect(taken).toEqual([['start a\n a2']]);
    expect(answered).toBe(false);
    takeOver[0]!();
    await turn();
    expect(taken).toEqual([['start a\n a2'], ['start b\n b2']]);
    expect(answered).toBe(false);
    takeOver[1]!();
    await answer;
    expect(answered).toBe(true);
    await processor.stop();
  });
});
