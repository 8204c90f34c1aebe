import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import type { Entry } from '../../../core/entry.js';
import { holdUntilTokens } from '../../../operators/limit/hold-until-tokens.js';
import { TokenBucket } from '../../../operators/limit/token-bucket.js';
import { entry } from '../../support/run-stages.js';

describe('holdUntilTokens', () => {
  it('queues an entry pushed back in while it releases others behind them', () => {
    const clock = new ManualClock(0n);
    const bucket = new TokenBucket(1000, 1);
    const held = holdUntilTokens(bucket, clock, { maxHeld: 10, onQueueFull: () => {}, onDiscard: () => {} });
    const input = new Subject<Entry>();
    const out: Array<[string, number]> = [];
    held.operator(input).subscribe((e) => {
      out.push([e.line, clock.now()]);
      if (e.line === 'b') input.next(entry('echo'));
    });
    input.next(entry('a'));
    input.next(entry('b'));
    input.next(entry('c'));
    clock.runAll();
    expect(out).toEqual([
      ['a', 0],
      ['b', 1],
      ['c', 2],
      ['echo', 3],
    ]);
  });

  it('holds at most maxHeld entries per subscription', () => {
    const clock = new ManualClock(0n);
    const refused: string[] = [];
    const held = holdUntilTokens(new TokenBucket(1, 1), clock, {
      maxHeld: 2,
      onQueueFull: (e) => refused.push(e.line),
      onDiscard: () => {},
    });
    const input = new Subject<Entry>();
    const out: string[] = [];
    held.operator(input).subscribe((e) => out.push(e.line));
    for (const l of 'abcde') input.next(entry(l));
    input.complete();
    clock.runAll();
    expect(out).toEqual(['a', 'b', 'c']);
    expect(refused).toEqual(['d', 'e']);
  });
});
