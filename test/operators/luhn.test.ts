import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRegex } from '../../lib/regex/index.js';
import { redactLuhnNumbers, type LuhnOptions } from '../../operators/luhn.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);
const anyChar = fc
  .oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0, max: 0x10ffff }))
  .map((cp) => (cp >= 0xd800 && cp <= 0xdfff ? '\uFFFD' : String.fromCodePoint(cp)));
const plain: LuhnOptions = { replacement: '**REDACTED**', minLength: 13, delimiters: '' };
const redact = (input: string, options: Partial<LuhnOptions> = {}) => redactLuhnNumbers(input, { ...plain, ...options });
const line = (config: string, text: string, extracted: Record<string, unknown> = {}) =>
  runConfig(config, [entry(text, {}, { extracted })]).entries[0]!.line;

/** `prefix` followed by the digit that makes it pass mod-10. */
function withCheckDigit(prefix: string): string {
  return ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'].map((d) => prefix + d).find(luhnValid)!;
}

/** Standard mod-10 check, written independently of the stage. */
function luhnValid(digits: string): boolean {
  const sum = [...digits].reverse().reduce((acc, d, i) => {
    const n = Number(d) * (i % 2 === 1 ? 2 : 1);
    return acc + (n > 9 ? n - 9 : n);
  }, 0);
  return sum % 10 === 0;
}

describe('stage.luhn', () => {
  it('redacts Luhn-valid runs of at least min_length digits', () => {
    expect(redact('Cards 4532015112830366 and 6011111111111117 are valid, 1234567812345678 is not.')).toBe(
      'Cards **REDACTED** and **REDACTED** are valid, 1234567812345678 is not.',
    );
  });

  it('counts min_length in digits and falls back to 13 below 1', () => {
    expect(line('stage.luhn { min_length = 12 }', 'a 424242424242 b')).toBe('a **REDACTED** b');
    expect(line('stage.luhn { min_length = 0 }', 'a 424242424242 b')).toBe('a 424242424242 b');
    expect(line('stage.luhn { min_length = -10 }', 'a 424242424242 b')).toBe('a 424242424242 b');
  });

  it('falls back to the default replacement when it is empty', () => {
    expect(line('stage.luhn { replacement = "" }', '4242424242424242')).toBe('**REDACTED**');
  });

  it('accepts leading zeros and all-zero runs', () => {
    expect(redact('00000000000000000000004242424242424242')).toBe('**REDACTED**');
    expect(redact('0000000000000')).toBe('**REDACTED**');
  });

  it('keeps runs that do not fit a signed 64-bit integer', () => {
    const fits = withCheckDigit('100000000000000000');
    expect(redact(fits)).toBe('**REDACTED**');
    const tooBig = withCheckDigit('9223372036854775808');
    expect(tooBig).toHaveLength(20);
    expect(redact(tooBig)).toBe(tooBig);
    // Luhn-valid and two above 9223372036854775807.
    expect(luhnValid('9223372036854775809')).toBe(true);
    expect(redact('9223372036854775809')).toBe('9223372036854775809');
  });

  it('takes any Unicode decimal digit as part of a run but never redacts non-ASCII digits', () => {
    expect(redact('٤٢٤٢٤٢٤٢٤٢٤٢٤٢٤٢')).toBe('٤٢٤٢٤٢٤٢٤٢٤٢٤٢٤٢');
    // The Arabic-Indic digit joins the run, so the ASCII digits around it are not a number alone.
    expect(redact('4242424242424242٤')).toBe('4242424242424242٤');
  });

  describe('delimiters', () => {
    const delimited = (text: string) => redact(text, { delimiters: ' -' });

    it('lets delimiters inside a number extend it', () => {
      expect(delimited('Cards 4532-0151-1283-0366 and 6011 1111 1111 1117 ok; 3530:1113:3330:0000 not')).toBe(
        'Cards **REDACTED** and **REDACTED** ok; 3530:1113:3330:0000 not',
      );
    });

    it('keeps the last of the trailing delimiters after the replacement', () => {
      expect(delimited('4242424242424242  next')).toBe('**REDACTED** next');
      expect(delimited('4242424242424242 -x')).toBe('**REDACTED**-x');
      expect(delimited('4242424242424242-')).toBe('**REDACTED**-');
    });

    it('emits a non-qualifying run verbatim, delimiters included', () => {
      expect(delimited('Card 4532-0151-1283-0367 -- no')).toBe('Card 4532-0151-1283-0367 -- no');
    });

    it('treats a leading delimiter as plain text', () => {
      expect(delimited('-4242424242424242')).toBe('-**REDACTED**');
    });

    it('can merge neighbouring numbers into one run', () => {
      expect(delimited('2024 4242424242424242')).toBe('2024 4242424242424242');
    });
  });

  describe('skip_regex', () => {
    const uuid = compileRegex('[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}');

    it('keeps a run lying inside a match and redacts the others', () => {
      expect(redact('s=a3f1b2e4-c5d6-7e8f-4242-424242424242 card=4242424242424242', { minLength: 12, skip: uuid })).toBe(
        's=a3f1b2e4-c5d6-7e8f-4242-424242424242 card=**REDACTED**',
      );
    });

    it('does not protect on a partial overlap or an empty match', () => {
      expect(redact('card=4242424242424242', { skip: compileRegex('42424242$') })).toBe('card=**REDACTED**');
      expect(redact('card=4242424242424242', { skip: compileRegex('^|$') })).toBe('card=**REDACTED**');
    });

    it('measures the protected span from the first to the last digit, not the trailing delimiters', () => {
      expect(redact('safe=4242-4242-4242-4242- x', { delimiters: '-', skip: compileRegex('safe=[0-9-]{19}') })).toBe(
        'safe=4242-4242-4242-4242- x',
      );
    });

    it('compares positions correctly after astral characters', () => {
      expect(redact('😀😀 4242424242424242 😀 4242424242424242', { skip: compileRegex('😀 \\d+ 😀') })).toBe(
        '😀😀 4242424242424242 😀 **REDACTED**',
      );
    });

    it('rejects a pattern that does not compile, prefixing Go’s error', () => {
      expect(() => runConfig('stage.luhn { skip_regex = "((" }', [])).toThrow(
        /^test\.alloy:1:29: stage\.luhn: could not compile regular expression: error parsing regexp: missing closing \): `\(\(`$/,
      );
    });
  });

  describe('source', () => {
    const config = 'stage.luhn { source = "message" }';

    it('writes the processed source into the line, even when nothing was redacted', () => {
      expect(line(config, 'original', { message: 'card 4242424242424242' })).toBe('card **REDACTED**');
      expect(line(config, 'original', { message: 'payment accepted' })).toBe('payment accepted');
    });

    it('leaves the extracted value unchanged', () => {
      const { entries } = runConfig(config, [entry('x', {}, { extracted: { message: '4242424242424242' } })]);
      expect(entries[0]!.extracted.message).toBe('4242424242424242');
    });

    it('does nothing unless the source holds a string', () => {
      for (const value of [undefined, 4242424242424242, null, ['4242424242424242']]) {
        expect(line(config, 'original 4242424242424242', value === undefined ? {} : { message: value })).toBe('original 4242424242424242');
      }
    });

    it('rejects an explicitly empty source', () => {
      expect(() => runConfig('stage.luhn { source = "" }', [])).toThrow('test.alloy:1:14: stage.luhn: empty source');
    });
  });

  describe('properties', () => {
    const text = fc
      .array(
        fc.oneof(
          fc.string({ unit: anyChar, maxLength: 6 }),
          fc.stringMatching(/^\d{10,20}$/),
          fc.constantFrom('4242424242424242', '6011-1111-1111-1117', ' ', '-'),
        ),
        { maxLength: 10 },
      )
      .map((p) => p.join(''));

    const qualifies = (run: string) => /^[0-9]+$/.test(run) && run.length >= 13 && BigInt(run) <= 9223372036854775807n && luhnValid(run);

    it('never changes a non-digit character nor a run failing the checksum', () => {
      fc.assert(
        fc.property(text, (input) => {
          // Independent oracle: split into maximal digit runs and replace only the qualifying ones.
          const expected = input
            .split(/(\p{Nd}+)/u)
            .map((part, i) => (i % 2 === 1 && qualifies(part) ? '#' : part))
            .join('');
          expect(redactLuhnNumbers(input, { replacement: '#', minLength: 13, delimiters: '' })).toBe(expected);
        }),
        { numRuns: NUM_RUNS },
      );
    });

    it('with delimiters, only ever removes digits and delimiters', () => {
      fc.assert(
        fc.property(text, (input) => {
          const out = redactLuhnNumbers(input, { replacement: '0', minLength: 13, delimiters: ' -' });
          const rest = (s: string) => s.replace(/[\p{Nd} -]/gu, '');
          expect(rest(out)).toBe(rest(input));
        }),
        { numRuns: NUM_RUNS },
      );
    });
  });
});
