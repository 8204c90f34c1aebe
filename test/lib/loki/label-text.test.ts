import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatLabelText, LabelTextError, parseLabelText } from '../../../lib/loki/label-text.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100);

describe('label text', () => {
  it('parses what it formats, for any label values', () => {
    const labelName = fc.string({ unit: fc.constantFrom(...'abcXYZ_019'), maxLength: 8 }).map((rest) => `l${rest}`);
    const labelSets = fc
      .array(fc.tuple(labelName, fc.string({ unit: 'binary', maxLength: 12 })), { maxLength: 6 })
      .map((pairs) => Object.fromEntries(pairs));
    fc.assert(
      fc.property(labelSets, (labels) => {
        // Lone surrogates cannot survive UTF-8; Go's quoting writes them as U+FFFD.
        const expected = Object.fromEntries(
          Object.entries(labels).map(([k, v]) => [k, (v as string & { toWellFormed(): string }).toWellFormed()]),
        );
        expect(parseLabelText(formatLabelText(labels))).toEqual(expected);
      }),
      { numRuns },
    );
  });

  it('formats sorted names with Go-quoted values', () => {
    expect(formatLabelText({ b: 'x"y', a: 'tab\there', c: 'é\u0001' })).toBe('{a="tab\\there", b="x\\"y", c="é\\x01"}');
    expect(formatLabelText({})).toBe('{}');
  });

  it('accepts the forms clients send: no spaces, single quotes, backquotes, a trailing comma', () => {
    expect(parseLabelText('{level="info",job="x"}')).toEqual({ level: 'info', job: 'x' });
    expect(parseLabelText(" { a = 'it\\'s' , b=`raw\\n`, } ")).toEqual({ a: "it's", b: 'raw\\n' });
    expect(parseLabelText('{}')).toEqual({});
    expect(parseLabelText('up{job="a"}')).toEqual({ __name__: 'up', job: 'a' });
  });

  it('names what is wrong and where', () => {
    expect(() => parseLabelText('{a="1"')).toThrow(new LabelTextError('parse error at offset 6 of "{a=\\"1\\"": expected "," or "}"'));
    expect(() => parseLabelText('{1a="x"}')).toThrow(
      new LabelTextError('parse error at offset 1 of "{1a=\\"x\\"}": expected a label name'),
    );
    expect(() => parseLabelText('{a="\\q"}')).toThrow(LabelTextError);
    expect(() => parseLabelText('{a="1"} x')).toThrow(
      new LabelTextError('parse error at offset 8 of "{a=\\"1\\"} x": unexpected text after "}"'),
    );
  });
});
