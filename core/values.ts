/**
 * Go-compatible value conversions shared by every stage: how the reference turns an extracted
 * value into text (`stringify`) or into a number (`toFloat`, metrics only), and the two
 * label-name validity schemes.
 */
import { parseGoDuration } from './duration';

/**
 * A value stored in the extracted map: string, number (Go float64), bigint (Go integers),
 * boolean, null, or arrays/objects (which no conversion accepts).
 */
export type ExtractedValue = unknown;

/**
 * The text form of an extracted value, or `undefined` when the reference cannot convert it
 * (null, undefined, arrays, objects, functions…). Such keys count as unusable, never as "null".
 *
 * @example stringify(1e21) === '1000000000000000000000'; stringify(true) === 'true'; stringify(null) === undefined
 */
export function stringify(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return value;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return formatGoFloat(value);
    case 'bigint':
      return value.toString();
    default:
      return undefined;
  }
}

/**
 * Go's `strconv.FormatFloat(n, 'f', -1, 64)`: the shortest digits that read back as the same
 * float64, laid out positionally (never with an exponent).
 *
 * @example formatGoFloat(1e-7) === '0.0000001'; formatGoFloat(-0) === '-0'; formatGoFloat(Infinity) === '+Inf'
 */
export function formatGoFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  const sign = n < 0 || Object.is(n, -0) ? '-' : '';
  // JS picks the same shortest round-trip digits as Go; only the layout differs.
  const text = String(Math.abs(n));
  const expAt = text.indexOf('e');
  if (expAt < 0) return sign + text;
  const mantissa = text.slice(0, expAt);
  const exponent = Number(text.slice(expAt + 1));
  const dot = mantissa.indexOf('.');
  const digits = dot < 0 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  // Position of the decimal point counted from the start of `digits`.
  const point = (dot < 0 ? mantissa.length : dot) + exponent;
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + '0'.repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * The number the metrics stage reads from an extracted value: numbers as they are, booleans as
 * 1/0, strings as a Go float (`parseGoFloat`) or else a Go duration in seconds; anything else
 * (and strings that are neither) gives `undefined`.
 *
 * An out-of-range float string such as `1e400` gives `undefined`: the reference's ParseFloat
 * reports an error for it, the duration fallback fails too, and the metric update is skipped.
 *
 * @example toFloat('0x1p-2') === 0.25; toFloat('1.5ms') === 0.0015; toFloat(' 1') === undefined
 */
export function toFloat(value: unknown): number | undefined {
  switch (typeof value) {
    case 'number':
      return value;
    case 'bigint':
      return Number(value);
    case 'boolean':
      return value ? 1 : 0;
    case 'string': {
      const parsed = parseGoFloat(value);
      if (parsed !== undefined) return parsed;
      let ns: bigint;
      try {
        ns = parseGoDuration(value);
      } catch {
        return undefined;
      }
      return durationSeconds(ns);
    }
    default:
      return undefined;
  }
}

/** Go's `Duration.Seconds()`: whole seconds plus the nanosecond remainder, each as a float. */
function durationSeconds(ns: bigint): number {
  const seconds = ns / 1_000_000_000n;
  const nanos = ns % 1_000_000_000n;
  return Number(seconds) + Number(nanos) / 1e9;
}

/**
 * Go's `strconv.ParseFloat(s, 64)`: decimal and hexadecimal float syntax with optional sign,
 * `_` digit separators (only where Go allows them), `inf`/`infinity`/`nan` in any case.
 * Returns `undefined` wherever Go returns an error — a syntax error, and also an out-of-range
 * value (Go hands back ±Inf together with an error, and every caller in the reference treats
 * that error as a failure). Underflow is not an error in Go: it gives 0 (or the nearest
 * subnormal), as here.
 *
 * @example parseGoFloat('1_000') === 1000; parseGoFloat('0x1p-2') === 0.25; parseGoFloat('1e400') === undefined
 */
export function parseGoFloat(s: string): number | undefined {
  const special = parseSpecialFloat(s);
  if (special !== undefined) return special;
  const literal = scanFloatLiteral(s);
  if (literal === undefined) return undefined;
  const value = literal.hex ? hexFloatValue(literal) : decimalFloatValue(literal);
  if (!Number.isFinite(value)) return undefined;
  return value;
}

function parseSpecialFloat(s: string): number | undefined {
  let rest = s;
  let sign = 1;
  if (rest[0] === '+' || rest[0] === '-') {
    sign = rest[0] === '-' ? -1 : 1;
    rest = rest.slice(1);
  } else if (/^nan$/i.test(rest)) {
    // Go accepts NaN only without a sign.
    return NaN;
  }
  if (/^inf(inity)?$/i.test(rest)) return sign * Infinity;
  return undefined;
}

interface FloatLiteral {
  readonly negative: boolean;
  readonly hex: boolean;
  /** Mantissa digits (no separators, no point), in the literal's base. */
  readonly digits: string;
  /** Digits after the point: value = digits × base^-fractionDigits × (10 or 2)^exponent. */
  readonly fractionDigits: number;
  readonly exponent: number;
}

// Go stops accumulating the exponent once it passes this bound; larger ones over/underflow anyway.
const EXPONENT_CAP = 10000;

/** A port of strconv's readFloat + underscoreOK: the whole string must be one float literal. */
function scanFloatLiteral(s: string): FloatLiteral | undefined {
  let i = 0;
  let negative = false;
  if (s[i] === '+') i++;
  else if (s[i] === '-') {
    negative = true;
    i++;
  }
  let hex = false;
  // Like Go, `0x` only counts as a prefix when something follows it.
  if (i + 2 < s.length && s[i] === '0' && (s[i + 1] === 'x' || s[i + 1] === 'X')) {
    hex = true;
    i += 2;
  }
  const isDigit = hex ? isHexDigit : isDecimalDigit;
  let underscores = false;
  let sawDot = false;
  let digits = '';
  let fractionDigits = 0;
  for (; i < s.length; i++) {
    const c = s[i]!;
    if (c === '_') {
      underscores = true;
    } else if (c === '.') {
      if (sawDot) break;
      sawDot = true;
    } else if (isDigit(c)) {
      digits += c;
      if (sawDot) fractionDigits++;
    } else {
      break;
    }
  }
  if (digits === '') return undefined;
  let exponent = 0;
  const expChar = hex ? 'p' : 'e';
  if (i < s.length && s[i]!.toLowerCase() === expChar) {
    i++;
    let expSign = 1;
    if (s[i] === '+') i++;
    else if (s[i] === '-') {
      expSign = -1;
      i++;
    }
    if (i >= s.length || !isDecimalDigit(s[i]!)) return undefined;
    for (; i < s.length && (isDecimalDigit(s[i]!) || s[i] === '_'); i++) {
      if (s[i] === '_') {
        underscores = true;
        continue;
      }
      if (exponent < EXPONENT_CAP) exponent = exponent * 10 + (s.charCodeAt(i) - 48);
    }
    exponent *= expSign;
  } else if (hex) {
    return undefined; // a hexadecimal mantissa needs a 'p' exponent
  }
  if (i !== s.length) return undefined;
  if (underscores && !underscoresAllowed(s)) return undefined;
  return { negative, hex, digits, fractionDigits, exponent };
}

/** Go's rule: `_` only between digits, or between a base prefix and a digit. */
function underscoresAllowed(literal: string): boolean {
  let s = literal;
  if (s[0] === '+' || s[0] === '-') s = s.slice(1);
  let i = 0;
  let saw: 'start' | 'digit' | 'underscore' | 'other' = 'start';
  let hex = false;
  if (s.length >= 2 && s[0] === '0' && /[bBoOxX]/.test(s[1]!)) {
    i = 2;
    saw = 'digit';
    hex = s[1] === 'x' || s[1] === 'X';
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    if (isDecimalDigit(c) || (hex && isHexDigit(c))) {
      saw = 'digit';
    } else if (c === '_') {
      if (saw !== 'digit') return false;
      saw = 'underscore';
    } else {
      if (saw === 'underscore') return false;
      saw = 'other';
    }
  }
  return saw !== 'underscore';
}

function isDecimalDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

function isHexDigit(c: string): boolean {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

function decimalFloatValue(lit: FloatLiteral): number {
  // The digits are validated; JS decimal-to-double conversion rounds correctly like Go's.
  const value = Number(`${lit.digits}e${lit.exponent - lit.fractionDigits}`);
  return lit.negative ? -value : value;
}

function hexFloatValue(lit: FloatLiteral): number {
  const mantissa = BigInt('0x' + lit.digits);
  const value = mantissa === 0n ? 0 : roundBinary(mantissa, lit.exponent - 4 * lit.fractionDigits);
  return lit.negative ? -value : value;
}

/** mantissa × 2^exp2 rounded to the nearest float64 (ties to even); overflow gives Infinity. */
function roundBinary(mantissa: bigint, exp2: number): number {
  const bits = mantissa.toString(2).length;
  // Keep 53 significant bits, or fewer when the result is subnormal (lowest bit weighs 2^-1074).
  const shift = Math.max(bits - 53, -1074 - exp2);
  let kept = mantissa;
  let exponent = exp2;
  if (shift > 0) {
    const big = BigInt(shift);
    kept = mantissa >> big;
    const remainder = mantissa - (kept << big);
    const half = 1n << (big - 1n);
    if (remainder > half || (remainder === half && (kept & 1n) === 1n)) kept += 1n;
    exponent += shift;
  }
  if (kept === 0n) return 0;
  if (exponent > 1023) return Infinity;
  // Two steps so that neither power of two over/underflows on its own.
  const firstStep = Math.max(-1022, Math.min(1023, exponent));
  return Number(kept) * 2 ** firstStep * 2 ** (exponent - firstStep);
}

// Lone surrogates are the only way a JS string can fail to be encodable as UTF-8.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Label-name validity under the Prometheus UTF-8 scheme (the reference's default): any non-empty
 * name that is valid UTF-8, e.g. `k8s.io/app` or `1abc`.
 */
export function isValidLabelName(name: string): boolean {
  return name.length > 0 && isValidUtf8String(name);
}

/** Label-name validity under the legacy Prometheus scheme `[a-zA-Z_][a-zA-Z0-9_]*`. */
export function isLegacyLabelName(name: string): boolean {
  return /^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name);
}

/**
 * Whether the string encodes to valid UTF-8, i.e. holds no lone surrogate.
 *
 * U+FFFD is accepted on purpose: it is a valid character the reference accepts too, and text
 * decoded from bytes has already lost the distinction between a real U+FFFD and an invalid byte
 * sequence. Code that must reject invalid UTF-8 bytes has to check them before decoding.
 */
export function isValidUtf8String(s: string): boolean {
  return !LONE_SURROGATE.test(s);
}
