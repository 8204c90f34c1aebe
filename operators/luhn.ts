/**
 * stage.luhn — redacts runs of digits that pass the Luhn checksum (card numbers and the like).
 *
 * Reference quirks kept:
 * - a run is consecutive Unicode decimal digits (any script); with `delimiters`, a delimiter
 *   extends a run that already holds a digit (a leading delimiter is plain text), so delimiters
 *   can merge neighbouring numbers into one run;
 * - a run is redacted when its digits are at least `min_length` UTF-8 bytes, read as a signed
 *   64-bit integer (non-ASCII digits and values above 9223372036854775807 fail, leading zeros are
 *   fine) and pass mod-10 (all zeros pass); a redacted run that ended in delimiters keeps its last
 *   delimiter after the replacement (`4242… ␠␠x` → `**REDACTED**␠x`); other runs stay verbatim;
 * - with `skip_regex`, a run whose first-to-last-digit span lies inside one (non-empty) match of
 *   all non-overlapping matches over the input is kept; partial overlaps do not protect;
 * - `replacement = ""` means the default and `min_length < 1` means 13;
 * - with `source`, the value must be a string (numbers are not converted), and the processed
 *   text replaces the LINE even when nothing was redacted; the extracted value is unchanged.
 */
import { FieldError } from '../lib/config/errors.js';
import { compileFieldRegex } from '../core/field-regex.js';
import type { Regex } from '../lib/regex/index.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { PER_ENTRY } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';

export interface LuhnConfig {
  readonly replacement: string;
  readonly min_length: number;
  /** Every character is a delimiter allowed inside a number. */
  readonly delimiters: string;
  /** RE2 pattern; numbers inside a match are kept. `""` means none. */
  readonly skip_regex: string;
  /** Extracted name holding the text; unset means the line, `""` is rejected. */
  readonly source?: string;
}

const DEFAULT_REPLACEMENT = '**REDACTED**';
const DEFAULT_MIN_LENGTH = 13;

export const luhn = defineStage<LuhnConfig>({
  name: 'luhn',
  doc: 'Redacts strings of digits that pass the Luhn checksum.',
  fields: {
    replacement: { kind: t.string, default: DEFAULT_REPLACEMENT, doc: 'Text put in place of a redacted number. Empty means the default.' },
    min_length: { kind: t.int, default: DEFAULT_MIN_LENGTH, doc: 'Minimum count of digits considered. Below 1 means 13.' },
    delimiters: { kind: t.string, default: '', doc: 'Characters accepted inside a number.' },
    skip_regex: { kind: t.string, default: '', doc: 'Numbers lying inside a match of this RE2 pattern are kept.' },
    source: { kind: t.string, doc: 'Extracted name whose text is processed into the line. Unset means the line.' },
  },
  validate: validateLuhn,
  build: buildLuhn,
  partitioning: () => PER_ENTRY,
});

function validateLuhn(config: LuhnConfig): void {
  if (config.source === '') throw new FieldError('source', 'empty source');
  if (!Number.isInteger(config.min_length)) throw new FieldError('min_length', 'min_length must be an integer');
  if (config.skip_regex !== '') compileFieldRegex('skip_regex', config.skip_regex);
}

/** How `redactLuhnNumbers` scans. */
export interface LuhnOptions {
  readonly replacement: string;
  readonly minLength: number;
  readonly delimiters: string;
  readonly skip?: Regex;
}

const ANY_DIGIT = /\p{Nd}/u;
const NEXT_DIGIT = /\p{Nd}/gu;
const DECIMAL_DIGIT = /^\p{Nd}$/u;
const INT64_MAX = '9223372036854775807';

/**
 * The text with every qualifying digit run replaced.
 *
 * @example redactLuhnNumbers('card 4242424242424242.', { replacement: 'X', minLength: 13, delimiters: '' }) === 'card X.'
 */
export function redactLuhnNumbers(input: string, options: LuhnOptions): string {
  if (!ANY_DIGIT.test(input)) return input;
  const { replacement, minLength, delimiters, skip } = options;
  let skipSpans: Array<readonly [number, number]> | undefined;
  let out = '';
  let copied = 0;
  let runStart = -1;
  let digits = '';
  let asciiOnly = true;
  let digitsEnd = 0;
  let trailingDelimiter = '';

  const flush = (runEnd: number): void => {
    if (asciiOnly && digits.length >= minLength && fitsInt64(digits) && passesLuhn(digits)) {
      skipSpans ??= skip
        ? skip
            .findAll(input)
            .filter((m) => m.end > m.index)
            .map((m) => [m.index, m.end] as const)
        : [];
      const protectedRun = skipSpans.some(([start, end]) => start <= runStart && digitsEnd <= end);
      if (!protectedRun) {
        out += input.slice(copied, runStart) + replacement + trailingDelimiter;
        copied = runEnd;
      }
    }
    runStart = -1;
    digits = '';
    asciiOnly = true;
    trailingDelimiter = '';
  };

  for (let i = 0; i < input.length; ) {
    if (runStart < 0) {
      // Outside a run only a digit matters: jump straight to the next one.
      NEXT_DIGIT.lastIndex = i;
      const next = NEXT_DIGIT.exec(input);
      if (next === null) break;
      i = next.index;
    }
    const code = input.charCodeAt(i);
    const next = input.charCodeAt(i + 1);
    const width = code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
    if (code >= 0x30 && code <= 0x39) {
      if (runStart < 0) runStart = i;
      digits += input[i];
      digitsEnd = i + 1;
      trailingDelimiter = '';
    } else if (code >= 0x80 && DECIMAL_DIGIT.test(input.slice(i, i + width))) {
      if (runStart < 0) runStart = i;
      // Never convertible to an integer, so the run can no longer qualify.
      asciiOnly = false;
      digits += input.slice(i, i + width);
      digitsEnd = i + width;
      trailingDelimiter = '';
    } else if (runStart >= 0 && delimiters !== '' && delimiters.includes(input.slice(i, i + width))) {
      trailingDelimiter = input.slice(i, i + width);
    } else if (runStart >= 0) {
      flush(i);
    }
    i += width;
  }
  if (runStart >= 0) flush(input.length);
  return copied === 0 ? input : out + input.slice(copied);
}

/** Whether the decimal digits read as a signed 64-bit integer (leading zeros allowed). */
function fitsInt64(digits: string): boolean {
  let start = 0;
  while (start < digits.length - 1 && digits.charCodeAt(start) === 0x30) start++;
  const significant = digits.length - start;
  if (significant < INT64_MAX.length) return true;
  if (significant > INT64_MAX.length) return false;
  return digits.slice(start) <= INT64_MAX;
}

/** The standard mod-10 check over ASCII digits; leading zeros change nothing. */
function passesLuhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

function buildLuhn(config: LuhnConfig): StageImpl {
  const options: LuhnOptions = {
    replacement: config.replacement === '' ? DEFAULT_REPLACEMENT : config.replacement,
    minLength: config.min_length < 1 ? DEFAULT_MIN_LENGTH : config.min_length,
    delimiters: config.delimiters,
    skip: config.skip_regex === '' ? undefined : compileFieldRegex('skip_regex', config.skip_regex),
  };
  const { source } = config;
  return {
    kind: 'map',
    process: (entry) => {
      let input = entry.line;
      if (source !== undefined) {
        if (!Object.hasOwn(entry.extracted, source)) return entry;
        const value = entry.extracted[source];
        if (typeof value !== 'string') return entry;
        input = value;
      }
      entry.line = redactLuhnNumbers(input, options);
      return entry;
    },
  };
}
