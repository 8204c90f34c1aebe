import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Fifo } from '../../lib/fifo.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100);

function fifoOf<T>(items: readonly T[]): Fifo<T> {
  const fifo = new Fifo<T>();
  for (const item of items) fifo.push(item);
  return fifo;
}

describe('Fifo', () => {
  it('gives items back in the order they were pushed', () => {
    const fifo = fifoOf(['a', 'b', 'c']);
    expect(fifo.length).toBe(3);
    expect(fifo.peek()).toBe('a');
    expect([fifo.shift(), fifo.shift()]).toEqual(['a', 'b']);
    fifo.push('d');
    expect(fifo.takeAll()).toEqual(['c', 'd']);
    expect(fifo.length).toBe(0);
  });

  it('answers undefined when empty', () => {
    const fifo = fifoOf([1]);
    fifo.shift();
    expect(fifo.peek()).toBeUndefined();
    expect(fifo.shift()).toBeUndefined();
    expect(fifo.length).toBe(0);
  });

  it('puts items back in front, in their order', () => {
    const fifo = fifoOf([1, 2, 3, 4]);
    const taken = [fifo.shift()!, fifo.shift()!];
    fifo.unshiftAll(taken);
    fifo.push(5);
    expect(fifo.takeAll()).toEqual([1, 2, 3, 4, 5]);
  });

  it('empties on clear', () => {
    const fifo = fifoOf([1, 2]);
    fifo.clear();
    expect(fifo.length).toBe(0);
    expect(fifo.takeAll()).toEqual([]);
  });

  it('keeps its order when it compacts the consumed prefix', () => {
    const fifo = fifoOf(Array.from({ length: 3000 }, (_, i) => i));
    for (let i = 0; i < 2000; i++) expect(fifo.shift()).toBe(i);
    fifo.push(3000);
    expect(fifo.length).toBe(1001);
    expect(fifo.peek()).toBe(2000);
    expect(fifo.takeAll()).toEqual(Array.from({ length: 1001 }, (_, i) => 2000 + i));
  });

  it('behaves as an array used as a queue', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer(), fc.constant('shift' as const)), { maxLength: 200 }), (ops) => {
        const fifo = new Fifo<number>();
        const model: number[] = [];
        for (const op of ops) {
          if (op === 'shift') expect(fifo.shift()).toBe(model.shift());
          else {
            fifo.push(op);
            model.push(op);
          }
          expect(fifo.length).toBe(model.length);
        }
        expect(fifo.takeAll()).toEqual(model);
      }),
      { numRuns },
    );
  });
});
