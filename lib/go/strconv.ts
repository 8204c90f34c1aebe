/**
 * Go's `strconv` number conversions for every Go-compatible part (configuration functions,
 * templates, stages): `FormatFloat` in every format, with digits rounded from the exact binary
 * value and half to even on exact ties (so `%.0f` of 2.5 is `2`, where `toFixed` gives `3`), and
 * `ParseInt`, `ParseUint` and `ParseFloat` with Go's literal syntax (base prefixes, `_` digit
 * separators, hexadecimal floats, `Inf`/`NaN`). Go's string quoting lives in `./gostring`.
 */

// ---------------------------------------------------------------------------------------------
// Float formatting

/** A decimal digit string with the decimal point `dp` digits from its start (Go's decimal). */
interface Decimal {
  digits: string;
  dp: number;
}

const f64 = new DataView(new ArrayBuffer(8));

/** Mantissa (with implicit bit) and binary exponent so that |x| = mant × 2^(exp − 52). */
function floatBits(x: number): { mant: bigint; exp: number; neg: boolean } {
  f64.setFloat64(0, x);
  const hi = f64.getUint32(0);
  const lo = f64.getUint32(4);
  const neg = hi >>> 31 === 1;
  let exp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (exp === 0) exp = 1;
  else mant |= 1n << 52n;
  return { mant, exp: exp - 1023, neg };
}

/** The exact decimal expansion of a finite double (sign dropped), trailing zeros trimmed. */
function exactDecimal(x: number): Decimal {
  if (x === 0) return { digits: '', dp: 0 };
  const { mant, exp } = floatBits(x);
  const e2 = exp - 52;
  let digits: string;
  let dp: number;
  if (e2 >= 0) {
    digits = (mant << BigInt(e2)).toString();
    dp = digits.length;
  } else {
    digits = (mant * 5n ** BigInt(-e2)).toString();
    dp = digits.length + e2;
  }
  return trimDecimal({ digits, dp });
}

function trimDecimal(d: Decimal): Decimal {
  let end = d.digits.length;
  while (end > 0 && d.digits.charCodeAt(end - 1) === 48) end--;
  if (end === 0) return { digits: '', dp: 0 };
  return end === d.digits.length ? d : { digits: d.digits.slice(0, end), dp: d.dp };
}

/** Go's `decimal.Round(nd)`: round half to even on the exact expansion. */
function roundDecimal(d: Decimal, nd: number): Decimal {
  if (nd < 0 || nd >= d.digits.length) return d;
  const digit = d.digits.charCodeAt(nd);
  let up: boolean;
  if (digit === 53 && nd + 1 === d.digits.length) {
    up = nd > 0 && (d.digits.charCodeAt(nd - 1) - 48) % 2 === 1;
  } else {
    up = digit >= 53;
  }
  if (!up) return trimDecimal({ digits: d.digits.slice(0, nd), dp: d.dp });
  for (let i = nd - 1; i >= 0; i--) {
    const c = d.digits.charCodeAt(i);
    if (c < 57) return { digits: d.digits.slice(0, i) + String.fromCharCode(c + 1), dp: d.dp };
  }
  return { digits: '1', dp: d.dp + 1 };
}

function fmtE(neg: boolean, d: Decimal, prec: number, fmt: string): string {
  let out = neg ? '-' : '';
  out += d.digits.length > 0 ? d.digits[0] : '0';
  if (prec > 0) {
    out += '.';
    const m = Math.min(d.digits.length, prec + 1);
    out += d.digits.slice(1, m);
    for (let i = Math.max(m, 1); i <= prec; i++) out += '0';
  }
  out += fmt;
  let exp = d.digits.length === 0 ? 0 : d.dp - 1;
  out += exp < 0 ? '-' : '+';
  exp = Math.abs(exp);
  out += exp < 10 ? '0' + exp : String(exp);
  return out;
}

function fmtF(neg: boolean, d: Decimal, prec: number): string {
  let out = neg ? '-' : '';
  if (d.dp > 0) {
    const m = Math.min(d.digits.length, d.dp);
    out += d.digits.slice(0, m);
    for (let i = m; i < d.dp; i++) out += '0';
  } else {
    out += '0';
  }
  if (prec > 0) {
    out += '.';
    for (let i = 1; i <= prec; i++) {
      const j = d.dp + i - 1;
      out += j >= 0 && j < d.digits.length ? d.digits[j] : '0';
    }
  }
  return out;
}

/**
 * `formatFloat` with prec < 0 (shortest round-trip digits) of a finite `abs`, from JS's own text
 * of the number: JS picks the same digits as Go, only the layout differs. This skips the digit
 * arithmetic because every extracted number is stringified this way. Undefined for a format Go
 * does not know.
 */
function fmtShortest(neg: boolean, abs: number, fmt: string): string | undefined {
  const sign = neg ? '-' : '';
  if (fmt === 'f') return sign + positional(String(abs));
  if (fmt !== 'e' && fmt !== 'E' && fmt !== 'g' && fmt !== 'G') return undefined;
  const [mantissa, expText] = abs.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  // %g is positional for exponents from -4 to 5, a range JS writes positionally as well.
  if ((fmt === 'g' || fmt === 'G') && exp >= -4 && exp < 6) return sign + String(abs);
  const expChar = fmt === 'e' || fmt === 'g' ? 'e' : 'E';
  return `${sign}${mantissa}${expChar}${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/** JS's text of a non-negative number (`1.5`, `1e-7`, `1.5e+21`) with any exponent laid out. */
function positional(text: string): string {
  const expAt = text.indexOf('e');
  if (expAt < 0) return text;
  const mantissa = text.slice(0, expAt);
  const exponent = Number(text.slice(expAt + 1));
  const dot = mantissa.indexOf('.');
  const digits = dot < 0 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  // Position of the decimal point counted from the start of `digits`.
  const point = (dot < 0 ? mantissa.length : dot) + exponent;
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * Go's `strconv.FormatFloat(x, fmt, prec, 64)` for the formats `e E f g G b x X` (prec < 0 means
 * the shortest representation that reads back exactly). An unknown format gives `%` and the
 * format, as Go does.
 *
 * @example formatFloat(1e6, 'g', -1) === '1e+06'; formatFloat(2.5, 'f', 0) === '2'; formatFloat(1e-7, 'f', -1) === '0.0000001'
 */
export function formatFloat(x: number, fmt: string, prec: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  const neg = x < 0 || Object.is(x, -0);
  if (fmt === 'b') return fmtB(x);
  if (fmt === 'x' || fmt === 'X') return fmtX(x, prec, fmt);
  if (prec < 0) return fmtShortest(neg, Math.abs(x), fmt) ?? '%' + fmt;
  let d = exactDecimal(x);
  if (fmt === 'e' || fmt === 'E') d = roundDecimal(d, prec + 1);
  else if (fmt === 'f') d = roundDecimal(d, d.dp + prec);
  else {
    if (prec === 0) prec = 1;
    d = roundDecimal(d, prec);
  }
  switch (fmt) {
    case 'e':
    case 'E':
      return fmtE(neg, d, prec, fmt);
    case 'f':
      return fmtF(neg, d, prec);
    case 'g':
    case 'G': {
      let eprec = prec;
      if (eprec > d.digits.length && d.digits.length >= d.dp) eprec = d.digits.length;
      const exp = d.dp - 1;
      if (exp < -4 || exp >= eprec) {
        if (prec > d.digits.length) prec = d.digits.length;
        return fmtE(neg, d, prec - 1, fmt === 'g' ? 'e' : 'E');
      }
      if (prec > d.dp) prec = d.digits.length;
      return fmtF(neg, d, Math.max(prec - d.dp, 0));
    }
    default:
      return '%' + fmt;
  }
}

function fmtB(x: number): string {
  const { mant, exp, neg } = floatBits(x);
  const m = x === 0 ? 0n : mant;
  const e = exp - 52;
  return `${neg ? '-' : ''}${m}p${e >= 0 ? '+' : ''}${e}`;
}

function fmtX(x: number, prec: number, fmt: string): string {
  const bits = floatBits(x);
  let mant = x === 0 ? 0n : bits.mant;
  let exp = x === 0 ? 0 : bits.exp;
  const top = 1n << 60n;
  mant <<= 8n;
  while (mant !== 0n && (mant & top) === 0n) {
    mant <<= 1n;
    exp--;
  }
  if (prec >= 0 && prec < 15) {
    const shift = BigInt(prec * 4);
    const extra = (mant << shift) & (top - 1n);
    mant >>= 60n - shift;
    if ((extra | (mant & 1n)) > 1n << 59n) mant++;
    mant <<= 60n - shift;
    if ((mant & (1n << 61n)) !== 0n) {
      mant >>= 1n;
      exp++;
    }
  }
  const digits = fmt === 'X' ? '0123456789ABCDEF' : '0123456789abcdef';
  let out = bits.neg ? '-' : '';
  out += '0' + fmt + ((mant >> 60n) & 1n).toString();
  mant = (mant << 4n) & ((1n << 64n) - 1n);
  if (prec < 0 && mant !== 0n) {
    out += '.';
    while (mant !== 0n) {
      out += digits[Number((mant >> 60n) & 15n)];
      mant = (mant << 4n) & ((1n << 64n) - 1n);
    }
  } else if (prec > 0) {
    out += '.';
    for (let i = 0; i < prec; i++) {
      out += digits[Number((mant >> 60n) & 15n)];
      mant = (mant << 4n) & ((1n << 64n) - 1n);
    }
  }
  out += fmt === 'X' ? 'P' : 'p';
  out += exp < 0 ? '-' : '+';
  exp = Math.abs(exp);
  out += exp < 10 ? '0' + exp : String(exp);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Parsing

/** Why a Go parse failed: `syntax` (ErrSyntax) or `range` (ErrRange). */
export type NumError = 'syntax' | 'range';

/** What Go's parse functions return: the value, and the error when there is one. */
export type NumResult<T> = { value: T } | { error: NumError; value: T };

/** Go's underscoreOK: `_` only between digits, or between a base prefix and a digit. */
function underscoreOK(literal: string): boolean {
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

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

/**
 * Go's `strconv.ParseInt(s, base, 64)`. Base 0 reads Go literal prefixes (`0x`, `0o`, `0b`, a
 * leading `0` for octal) and allows underscores between digits. Out of range, the value is the
 * nearest int64, as Go returns it.
 *
 * @example parseGoInt('0x1F', 0) → { value: 31n }; parseGoInt('1_0', 10) → { error: 'syntax', value: 0n }
 */
export function parseGoInt(s: string, base: number): NumResult<bigint> {
  if (s.length === 0) return { error: 'syntax', value: 0n };
  let neg = false;
  let body = s;
  if (body[0] === '+' || body[0] === '-') {
    neg = body[0] === '-';
    body = body.slice(1);
  }
  const u = parseGoUint(body, base, s);
  if ('error' in u && u.error === 'syntax') return { error: 'syntax', value: 0n };
  const v = neg ? -u.value : u.value;
  if ('error' in u || v > INT64_MAX || v < INT64_MIN) return { error: 'range', value: neg ? INT64_MIN : INT64_MAX };
  return { value: v };
}

/**
 * Go's `strconv.ParseUint(s, base, 64)` (no sign accepted). `whole` is the literal the
 * underscore rule looks at, the signed text when `parseGoInt` calls this for its digits.
 */
export function parseGoUint(s: string, base: number, whole: string = s): NumResult<bigint> {
  if (s.length === 0) return { error: 'syntax', value: 0n };
  const base0 = base === 0;
  let digits = s;
  if (base === 0) {
    base = 10;
    if (s[0] === '0') {
      if (s.length >= 3 && (s[1] === 'b' || s[1] === 'B')) {
        base = 2;
        digits = s.slice(2);
      } else if (s.length >= 3 && (s[1] === 'o' || s[1] === 'O')) {
        base = 8;
        digits = s.slice(2);
      } else if (s.length >= 3 && (s[1] === 'x' || s[1] === 'X')) {
        base = 16;
        digits = s.slice(2);
      } else {
        base = 8;
        digits = s.slice(1);
        if (digits.length === 0) return { value: 0n };
      }
    }
  }
  let value = 0n;
  let sawUnderscore = false;
  const bigBase = BigInt(base);
  for (const c of digits) {
    if (c === '_' && base0) {
      sawUnderscore = true;
      continue;
    }
    const d = digitValue(c);
    if (d < 0 || d >= base) return { error: 'syntax', value: 0n };
    value = value * bigBase + BigInt(d);
  }
  if (sawUnderscore && !underscoreOK(whole)) return { error: 'syntax', value: 0n };
  if (value > UINT64_MAX) return { error: 'range', value: UINT64_MAX };
  return { value };
}

function digitValue(c: string): number {
  const code = c.charCodeAt(0);
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 122) return code - 87;
  if (code >= 65 && code <= 90) return code - 55;
  return -1;
}

/**
 * Go's `strconv.ParseFloat(s, 64)`: decimal and hexadecimal float syntax with optional sign,
 * `_` digit separators (only where Go allows them), `inf`/`infinity` in any case with an
 * optional sign, `nan` in any case without one. Out of range, the value is ±Inf together with
 * a `range` error, as Go returns it; underflow is no error (it gives 0 or the nearest subnormal).
 *
 * @example parseGoFloat('0x1p-2') → { value: 0.25 }; parseGoFloat('1e400') → { error: 'range', value: Infinity }
 */
export function parseGoFloat(s: string): NumResult<number> {
  const special = parseSpecialFloat(s);
  if (special !== undefined) return { value: special };
  const literal = scanFloatLiteral(s);
  if (literal === undefined) return { error: 'syntax', value: 0 };
  const value = literal.hex ? hexFloatValue(literal) : decimalFloatValue(literal);
  if (!Number.isFinite(value)) return { error: 'range', value };
  return { value };
}

/**
 * The float `parseGoFloat` reads, or `undefined` wherever Go returns an error — out of range
 * included, since every caller in the reference treats that error as a failure.
 *
 * @example parseGoFloatOrUndefined('1_000') === 1000; parseGoFloatOrUndefined('1e400') === undefined
 */
export function parseGoFloatOrUndefined(s: string): number | undefined {
  const parsed = parseGoFloat(s);
  return 'error' in parsed ? undefined : parsed.value;
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
  if (underscores && !underscoreOK(s)) return undefined;
  return { negative, hex, digits, fractionDigits, exponent };
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
