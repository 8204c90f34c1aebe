/**
 * The parts of Go's `strconv` the template engine needs: float formatting in every `fmt` format
 * (with Go's round-half-even on exact ties, which `toFixed` does not do), integer and float
 * parsing with Go's syntax, and string/rune quoting.
 */
import { isGoPrintable } from '../gostring';

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

/** The shortest digits that read back as `x` (what JS and Go both print by default). */
function shortestDecimal(x: number): Decimal {
  if (x === 0) return { digits: '', dp: 0 };
  const s = Math.abs(x).toExponential();
  const e = s.indexOf('e');
  const digits = s.slice(0, e).replace('.', '');
  return trimDecimal({ digits, dp: Number(s.slice(e + 1)) + 1 });
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
 * Go's `strconv.FormatFloat(x, fmt, prec, 64)` for the formats `e E f g G b x X` (prec < 0 means
 * the shortest representation that reads back exactly).
 */
export function formatFloat(x: number, fmt: string, prec: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  const neg = x < 0 || Object.is(x, -0);
  if (fmt === 'b') return fmtB(x);
  if (fmt === 'x' || fmt === 'X') return fmtX(x, prec, fmt);
  const shortest = prec < 0;
  let d: Decimal;
  if (shortest) {
    d = shortestDecimal(x);
    if (fmt === 'e' || fmt === 'E') prec = Math.max(d.digits.length - 1, 0);
    else if (fmt === 'f') prec = Math.max(d.digits.length - d.dp, 0);
    else prec = d.digits.length;
  } else {
    d = exactDecimal(x);
    if (fmt === 'e' || fmt === 'E') d = roundDecimal(d, prec + 1);
    else if (fmt === 'f') d = roundDecimal(d, d.dp + prec);
    else {
      if (prec === 0) prec = 1;
      d = roundDecimal(d, prec);
    }
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
      if (shortest) eprec = 6;
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

/** Go's underscoreOK: underscores only between digits (or after a base prefix). */
function underscoreOK(s: string): boolean {
  let saw = '^';
  let i = 0;
  if (s.length >= 1 && (s[0] === '-' || s[0] === '+')) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === '0') {
    const c = s[1]!.toLowerCase();
    if (c === 'b' || c === 'o' || c === 'x') {
      i = 2;
      saw = '0';
      hex = c === 'x';
    }
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    if ((c >= '0' && c <= '9') || (hex && /[a-fA-F]/.test(c))) {
      saw = '0';
      continue;
    }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/**
 * Go's `strconv.ParseInt(s, base, 64)`. Base 0 reads Go literal prefixes (`0x`, `0o`, `0b`, a
 * leading `0` for octal) and allows underscores between digits.
 */
export function parseGoInt(s: string, base: number): { value: bigint } | { error: NumError; value: bigint } {
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

/** Go's `strconv.ParseUint(s, base, 64)` (no sign accepted). */
export function parseGoUint(
  s: string,
  base: number,
  whole: string = s,
): { value: bigint } | { error: NumError; value: bigint } {
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
  if (value > (1n << 64n) - 1n) return { error: 'range', value: (1n << 64n) - 1n };
  return { value };
}

function digitValue(c: string): number {
  const code = c.charCodeAt(0);
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 122) return code - 87;
  if (code >= 65 && code <= 90) return code - 55;
  return -1;
}

const DECIMAL_FLOAT = /^[+-]?(?:\d[\d_]*\.?[\d_]*|\.[\d_]+)(?:[eE][+-]?[\d_]+)?$/;
const HEX_FLOAT = /^([+-]?)0[xX]((?:[\da-fA-F_]+\.?[\da-fA-F_]*|\.[\da-fA-F_]+))[pP]([+-]?[\d_]+)$/;
const SPECIAL_FLOAT = /^([+-]?)(inf|infinity|nan)$/i;

/** Go's `strconv.ParseFloat(s, 64)`: decimal and hex floats, `Inf`/`NaN`, underscores. */
export function parseGoFloat(s: string): { value: number } | { error: NumError; value: number } {
  const special = SPECIAL_FLOAT.exec(s);
  if (special) {
    if (special[2]!.toLowerCase() === 'nan') return { value: NaN };
    return { value: special[1] === '-' ? -Infinity : Infinity };
  }
  let value: number;
  if (DECIMAL_FLOAT.test(s)) {
    if (s.includes('_') && !underscoreOK(s)) return { error: 'syntax', value: 0 };
    value = Number(s.replace(/_/g, ''));
  } else {
    const hex = HEX_FLOAT.exec(s);
    if (!hex) return { error: 'syntax', value: 0 };
    if (s.includes('_') && !underscoreOK(s)) return { error: 'syntax', value: 0 };
    const mantText = hex[2]!.replace(/_/g, '');
    const point = mantText.indexOf('.');
    const intDigits = point < 0 ? mantText : mantText.slice(0, point);
    const fracDigits = point < 0 ? '' : mantText.slice(point + 1);
    const mant = BigInt('0x' + (intDigits + fracDigits || '0'));
    const exp = Number(hex[3]!.replace(/_/g, '')) - 4 * fracDigits.length;
    value = Number(mant) * 2 ** exp;
    if (hex[1] === '-') value = -value;
  }
  if (!Number.isFinite(value)) return { error: 'range', value };
  return { value };
}

// ---------------------------------------------------------------------------------------------
// Quoting

const SHORT_ESCAPES: Readonly<Record<number, string>> = {
  0x07: '\\a',
  0x08: '\\b',
  0x0c: '\\f',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x0b: '\\v',
};

function hex(value: number, width: number): string {
  return value.toString(16).padStart(width, '0');
}

function escapeRune(code: number, quote: number, asciiOnly: boolean): string {
  if (code === quote || code === 0x5c) return '\\' + String.fromCodePoint(code);
  if (asciiOnly) {
    if (code < 0x80 && isGoPrintable(code)) return String.fromCharCode(code);
  } else if (isGoPrintable(code)) {
    return String.fromCodePoint(code);
  }
  const short = SHORT_ESCAPES[code];
  if (short !== undefined) return short;
  if (code < 0x20 || code === 0x7f) return '\\x' + hex(code, 2);
  if (code > 0x10ffff || (code >= 0xd800 && code < 0xe000)) code = 0xfffd;
  if (code < 0x10000) return '\\u' + hex(code, 4);
  return '\\U' + hex(code, 8);
}

/** Go's `strconv.Quote` (or `QuoteToASCII` with `asciiOnly`). */
export function quoteString(s: string, asciiOnly = false): string {
  let out = '"';
  for (const ch of s) {
    let code = ch.codePointAt(0)!;
    // A lone surrogate is how an invalid UTF-8 sequence survives in JS; Go would have
    // read it as U+FFFD.
    if (code >= 0xd800 && code < 0xe000) code = 0xfffd;
    if (code < 0x80 && code >= 0x20 && code !== 0x22 && code !== 0x5c && code !== 0x7f) {
      out += ch;
      continue;
    }
    out += escapeRune(code, 0x22, asciiOnly);
  }
  return out + '"';
}

/** Go's `strconv.QuoteRune` (or `QuoteRuneToASCII`); invalid code points become U+FFFD. */
export function quoteRune(code: number, asciiOnly = false): string {
  if (code < 0 || code > 0x10ffff || (code >= 0xd800 && code < 0xe000)) code = 0xfffd;
  return "'" + escapeRune(code, 0x27, asciiOnly) + "'";
}

/** Go's `strconv.CanBackquote`. */
export function canBackquote(s: string): boolean {
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (code === 0x60 || code === 0xfeff || code === 0x7f) return false;
    if (code < 0x20 && code !== 0x09) return false;
    if (code >= 0xd800 && code < 0xe000) return false;
  }
  return true;
}
