import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeState, encodeState, matchingSample } from '../../../playground/web/share.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 30);
/** ASCII plus a few characters that test UTF-8 and JSON escaping. */
const text = fc.string({
  unit: fc.oneof(fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }), fc.constantFrom('é', '😀', '中', '\u2028')),
  maxLength: 200,
});

describe('share links', () => {
  it('round-trips any state through the URL hash', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          config: text,
          input: text,
          inputFormat: fc.constantFrom('jsonl' as const, 'text' as const),
          now: fc.string({ maxLength: 30 }),
        }),
        fc.option(fc.integer(), { nil: undefined }),
        async (base, seed) => {
          const state = seed === undefined ? base : { ...base, seed };
          const hash = await encodeState(state);
          expect(hash).toMatch(/^#s=[A-Za-z0-9_-]*$/);
          expect(await decodeState(hash)).toEqual(state);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('compresses a typical pipeline well below its size', async () => {
    const config = 'stage.json {\n  expressions = { level = "", msg = "" }\n}\n'.repeat(20);
    const hash = await encodeState({ config, input: '', inputFormat: 'jsonl', now: '' });
    expect(hash.length).toBeLessThan(config.length / 4);
  });

  it('ignores hashes that hold no state', async () => {
    expect(await decodeState('')).toBeUndefined();
    expect(await decodeState('#section')).toBeUndefined();
    expect(await decodeState('#s=not-deflate')).toBeUndefined();
  });
});

describe('matchingSample', () => {
  const a = { id: 'a', config: 'stage.decolorize {}\n', input: 'x\n', inputFormat: 'text' as const, now: '2024-05-01T00:00:00Z' };
  const b = { ...a, id: 'b', seed: 7 };
  const state = ({ id: _id, ...rest }: typeof a & { seed?: number }) => rest;

  it('names the sample the state still is', () => {
    expect(matchingSample(state(a), [a, b])?.id).toBe('a');
    expect(matchingSample(state(b), [a, b])?.id).toBe('b');
  });

  it('names none once the config, input or an option differs', () => {
    expect(matchingSample({ ...state(a), config: 'stage.decolorize {}\n\n' }, [a, b])).toBeUndefined();
    expect(matchingSample({ ...state(a), input: 'y\n' }, [a, b])).toBeUndefined();
    expect(matchingSample({ ...state(a), inputFormat: 'jsonl' }, [a, b])).toBeUndefined();
    expect(matchingSample({ ...state(a), now: '' }, [a, b])).toBeUndefined();
    expect(matchingSample({ ...state(a), seed: 1 }, [a, b])).toBeUndefined();
  });

  it('prefers the sample that was picked when two are the same', () => {
    const twin = { ...a, id: 'twin' };
    expect(matchingSample(state(a), [a, twin], 'twin')?.id).toBe('twin');
    expect(matchingSample(state(a), [a, twin])?.id).toBe('a');
  });
});
