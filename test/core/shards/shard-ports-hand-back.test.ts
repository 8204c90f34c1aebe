/**
 * What crosses between shards with a delivery besides its entries: for a sender that acknowledges
 * upstream only once held lines were sent on (a JetStream reader), `untilSentOn` and its
 * hand-back, whose request or end on the sending shard reaches the owning shard after the entries
 * delivered before; and a source's backlog, which waits and closes on the owning shard as it does
 * on the sender's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Entry } from '../../../core/entry.js';
import { HandBack, HandedBackError } from '../../../core/hand-back.js';
import { InputBacklog } from '../../../core/input-time.js';
import type { DeliverOptions } from '../../../core/shard-context.js';
import type { ShardPorts } from '../../../core/shards/shard.js';
import { closeShardPairs, shardPair as pair } from './shard-pair.js';

afterEach(closeShardPairs);

const entry = (line: string): Entry => ({ labels: { app: 'x' }, line, timestamp: 1n, structuredMetadata: [], extracted: {} });

/** A component on shard 1 that holds every delivery until its hand-back is requested (then fails it) or ended (then takes it). */
function holdingOwner(owner: ShardPorts) {
  const seen: { lines: string[]; options: DeliverOptions | undefined }[] = [];
  const events: string[] = [];
  owner.serveEntries('logs.process.p', (entries, options) => {
    seen.push({ lines: entries.map((e) => e.line), options });
    const handBack = options?.handBack;
    if (!handBack) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      handBack.onRequest(() => {
        events.push(`requested after ${seen.length}`);
        reject(new HandedBackError());
      });
      handBack.onEnd(() => {
        events.push(`ended after ${seen.length}`);
        resolve();
      });
    });
  });
  return { seen, events };
}

describe('the ports between shards, for a sender that waits for held lines', () => {
  it('carry untilSentOn and the hand-back; its request fails the deliveries held there with HandedBackError', async () => {
    const [a, b] = pair();
    const { seen, events } = holdingOwner(b);
    const handBack = new HandBack();
    const first = a.deliver(1, 'logs.process.p', [entry('one')], { untilSentOn: true, handBack });
    const second = a.deliver(1, 'logs.process.p', [entry('two')], { untilSentOn: true, handBack });
    first.catch(() => {});
    second.catch(() => {});
    await expect.poll(() => seen.length).toBe(2);
    // One hand-back on the owner stands for the sender's, for every delivery.
    const there = seen[0]!.options!.handBack!;
    expect(there).toBeInstanceOf(HandBack);
    expect(there).not.toBe(handBack);
    expect(seen.map((s) => [s.lines, s.options!.untilSentOn, s.options!.handBack === there])).toEqual([
      [['one'], true, true],
      [['two'], true, true],
    ]);
    handBack.request();
    await expect(first).rejects.toBeInstanceOf(HandedBackError);
    await expect(second).rejects.toBeInstanceOf(HandedBackError);
    expect(events).toEqual(['requested after 2', 'requested after 2']);
  });

  it('relay the end of a hand-back after the entries delivered before it, and the deliveries then resolve', async () => {
    const [a, b] = pair();
    const { seen, events } = holdingOwner(b);
    const handBack = new HandBack();
    const first = a.deliver(1, 'logs.process.p', [entry('one')], { untilSentOn: true, handBack });
    // Ended as soon as the second delivery is posted: the owner takes both before it hears the end.
    const second = a.deliver(1, 'logs.process.p', [entry('two')], { untilSentOn: true, handBack });
    handBack.end();
    await Promise.all([first, second]);
    expect(seen.map((s) => s.lines)).toEqual([['one'], ['two']]);
    expect(events).toEqual(['ended after 2', 'ended after 2']);
    // A request after the end has nothing more to take back there.
    handBack.request();
    expect(seen[0]!.options!.handBack!.requested).toBe(false);
  });

  it('carry a hand-back already requested with the delivery, which the owner then fails', async () => {
    const [a, b] = pair();
    holdingOwner(b);
    const handBack = new HandBack();
    handBack.request();
    await expect(a.deliver(1, 'logs.process.p', [entry('one')], { untilSentOn: true, handBack })).rejects.toBeInstanceOf(HandedBackError);
  });

  it('carry no options for a sender that does not wait for held lines', async () => {
    const [a, b] = pair();
    const { seen } = holdingOwner(b);
    await a.deliver(1, 'logs.process.p', [entry('one')], { handBack: new HandBack() });
    await a.deliver(1, 'logs.process.p', [entry('two')]);
    expect(seen).toEqual([
      { lines: ['one'], options: undefined },
      { lines: ['two'], options: undefined },
    ]);
  });
});

describe('the ports between shards, for a source with a backlog', () => {
  it('make the owner a backlog that waits while the source’s waits, and closes with it', async () => {
    const [a, b] = pair();
    const { seen } = holdingOwner(b);
    const backlog = new InputBacklog();
    const release = backlog.hold();
    await a.deliver(1, 'logs.process.p', [entry('one')], { backlog });
    const there = seen[0]!.options!.backlog!;
    expect(there).toBeInstanceOf(InputBacklog);
    expect(there).not.toBe(backlog);
    await expect.poll(() => there.waiting).toBe(true);
    release();
    await expect.poll(() => there.waiting).toBe(false);
    backlog.hold();
    await expect.poll(() => there.waiting).toBe(true);
    // The same backlog again: the same one there, and nothing more carried than the backlog.
    await a.deliver(1, 'logs.process.p', [entry('two')], { backlog });
    expect(seen[1]!.options).toEqual({ backlog: there });
    backlog.close();
    await expect.poll(() => there.isClosed).toBe(true);
    expect(there.waiting).toBe(false);
  });

  it('tell the owner of a backlog that closed while nothing waited, so it lets it go', async () => {
    const [a, b] = pair();
    const { seen } = holdingOwner(b);
    const backlog = new InputBacklog();
    await a.deliver(1, 'logs.process.p', [entry('one')], { backlog });
    const there = seen[0]!.options!.backlog!;
    const heard: boolean[] = [];
    there.watch((waiting) => heard.push(waiting));
    backlog.close();
    await expect.poll(() => there.isClosed).toBe(true);
    expect(heard).toEqual([false]);
  });
});
