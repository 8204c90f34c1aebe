import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stripAnsi } from '../../operators/decolorize.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 200);
// Any Unicode scalar, ASCII-heavy; surrogates stand for invalid UTF-8 decoded as U+FFFD.
const anyChar = fc
  .oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0, max: 0x10ffff }))
  .map((cp) => (cp >= 0xd800 && cp <= 0xdfff ? '\uFFFD' : String.fromCodePoint(cp)));
const ESC = '\u001b';

describe('stage.decolorize', () => {
  it('removes colour codes from the line only', () => {
    const { entries } = runConfig('stage.decolorize {}', [
      entry(`${ESC}[0;32mgreen${ESC}[0m ${ESC}[0;31mred${ESC}[0m`, { c: `${ESC}[1m` }),
    ]);
    expect(entries[0]!.line).toBe('green red');
    expect(entries[0]!.labels).toEqual({ c: `${ESC}[1m` });
    expect(entries[0]!.extracted).toEqual({ c: `${ESC}[1m` });
  });

  it('eats a final byte that is a letter of the text, as the reference does', () => {
    expect(stripAnsi(`[2022-11-04 22:17:57.811] ${ESC}[0;32http${ESC}[0m: GET /_health (0 ms) 204`)).toBe(
      '[2022-11-04 22:17:57.811] ttp: GET /_health (0 ms) 204',
    );
  });

  it('removes OSC sequences ended by BEL', () => {
    expect(stripAnsi(`${ESC}]0;title\u0007after`)).toBe('after');
  });

  it('removes only ESC ] 0 of an OSC title holding a space, as the reference pattern does', () => {
    expect(stripAnsi(`${ESC}]0;window title\u0007after`)).toBe(';window title\u0007after');
  });

  it('treats the 8-bit CSI introducer like ESC [', () => {
    expect(stripAnsi('\u009b31mred\u009b0m')).toBe('red');
  });

  it('removes cursor and erase sequences', () => {
    expect(stripAnsi(`a${ESC}[2Kb${ESC}[1;1Hc${ESC}[?25ld`)).toBe('abcd');
  });

  it('leaves an ESC followed by a character that cannot end a sequence', () => {
    expect(stripAnsi(`${ESC}b text`)).toBe(`${ESC}b text`);
    expect(stripAnsi(`x${ESC}`)).toBe(`x${ESC}`);
  });

  it('allows at most four digits in a parameter, so the fifth is taken as the final byte', () => {
    expect(stripAnsi(`${ESC}[12345m`)).toBe('m');
  });

  it('is not idempotent on a stray ESC that a removal joins to a new sequence, like the reference', () => {
    const once = stripAnsi(`${ESC}${ESC}<0`);
    expect(once).toBe(`${ESC}0`);
    expect(stripAnsi(once)).toBe('');
  });

  it('removes well-formed sequences between plain text exactly and is then idempotent (property)', () => {
    // BEL is left out: right after `ESC [ A` it would complete an OSC-like sequence instead.
    const plain = fc.string({ unit: anyChar, maxLength: 20 }).map((s) => s.replace(/[\u001b\u009b\u0007]/g, ''));
    const params = fc.array(fc.oneof(fc.constant(''), fc.nat(9999).map(String)), { maxLength: 4 }).map((p) => p.join(';'));
    const csi = fc
      .tuple(fc.constantFrom(`${ESC}[`, '\u009b'), params, fc.constantFrom(...'ABCDHJKPRZcfghlmnqrty'))
      .map(([intro, p, final]) => intro + p + final);
    const word = fc.string({ unit: fc.constantFrom(...'abzAZ09'), maxLength: 8 });
    const osc = fc.array(word, { minLength: 1, maxLength: 3 }).map((words) => `${ESC}]${words.join(';')}\u0007`);
    const pieces = fc.array(fc.tuple(plain, fc.oneof(csi, osc)), { maxLength: 8 });
    fc.assert(
      fc.property(pieces, plain, (parts, tail) => {
        const text = parts.map(([p, seq]) => p + seq).join('') + tail;
        const once = stripAnsi(text);
        expect(once).toBe(parts.map(([p]) => p).join('') + tail);
        expect(stripAnsi(once)).toBe(once);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('leaves text without an escape introducer unchanged (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: anyChar }).filter((s) => !s.includes(ESC) && !s.includes('\u009b')),
        (text) => {
          expect(stripAnsi(text)).toBe(text);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
