/**
 * Go's `strconv.FormatFloat` for the `e`, `E`, `f`, `g` and `G` formats, used by `string.format`.
 * With a precision, digits are rounded from the exact binary value, half to even on exact ties
 * (so `%.0f` of 2.5 is `2`, as in Go, where JavaScript's toFixed gives `3`).
 */

/** A decimal digit string `d` with the decimal point `dp` places from its start: 0.d × 10^dp. */
interface Decimal {
  digits: string;
  dp: number;
}

/** The shortest digits that read back as `abs` (JavaScript and Go choose the same ones). */
function shortestDecimal(abs: number): Decimal {
  if (abs === 0) return { digits: '', dp: 0 };
  const [mantissa, exponent] = abs.toExponential().split('e') as [string, string];
  return { digits: mantissa.replace('.', ''), dp: Number(exponent) + 1 };
}

/** Every digit of the binary value of `abs`, without trailing zeros. */
function exactDecimal(abs: number): Decimal {
  if (abs === 0) return { digits: '', dp: 0 };
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, abs);
  const bits = view.getBigUint64(0);
  const biasedExponent = Number((bits >> 52n) & 0x7ffn);
  let mantissa = bits & ((1n << 52n) - 1n);
  let exponent: number;
  if (biasedExponent === 0) {
    exponent = -1074;
  } else {
    mantissa |= 1n << 52n;
    exponent = biasedExponent - 1075;
  }
  let digits: string;
  let dp: number;
  if (exponent >= 0) {
    digits = (mantissa << BigInt(exponent)).toString();
    dp = digits.length;
  } else {
    digits = (mantissa * 5n ** BigInt(-exponent)).toString();
    dp = digits.length + exponent;
  }
  return trimZeros({ digits, dp });
}

function trimZeros(d: Decimal): Decimal {
  let end = d.digits.length;
  while (end > 0 && d.digits[end - 1] === '0') end--;
  return { digits: d.digits.slice(0, end), dp: end === 0 ? 0 : d.dp };
}

/** Rounds to `nd` digits the way Go's strconv decimal does. */
function roundDecimal(d: Decimal, nd: number): Decimal {
  if (nd < 0 || nd >= d.digits.length) return d;
  const digit = d.digits[nd]!;
  const exactHalf = digit === '5' && nd + 1 === d.digits.length;
  const up = exactHalf ? nd > 0 && Number(d.digits[nd - 1]) % 2 === 1 : digit >= '5';
  if (!up) return trimZeros({ digits: d.digits.slice(0, nd), dp: d.dp });
  let i = nd - 1;
  while (i >= 0 && d.digits[i] === '9') i--;
  if (i < 0) return { digits: '1', dp: d.dp + 1 };
  return { digits: d.digits.slice(0, i) + String(Number(d.digits[i]) + 1), dp: d.dp };
}

export type FloatFormat = 'e' | 'E' | 'f' | 'g' | 'G';

/**
 * `strconv.FormatFloat(value, format, precision, 64)`; a negative precision asks for the
 * shortest digits that read back as the same number.
 *
 * @example formatFloat(1e6, 'g', -1) === '1e+06'; formatFloat(2.5, 'f', 0) === '2'
 */
export function formatFloat(value: number, format: FloatFormat, precision: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  const negative = value < 0 || Object.is(value, -0);
  const abs = Math.abs(value);
  const shortest = precision < 0;
  const lower = format.toLowerCase() as 'e' | 'f' | 'g';
  let digits: Decimal;
  let prec = precision;
  if (shortest) {
    digits = shortestDecimal(abs);
    if (lower === 'e') prec = Math.max(digits.digits.length - 1, 0);
    else if (lower === 'f') prec = Math.max(digits.digits.length - digits.dp, 0);
    else prec = digits.digits.length;
  } else {
    const exact = exactDecimal(abs);
    if (lower === 'e') digits = roundDecimal(exact, prec + 1);
    else if (lower === 'f') digits = roundDecimal(exact, exact.dp + prec);
    else {
      if (prec === 0) prec = 1;
      digits = roundDecimal(exact, prec);
    }
  }
  const sign = negative ? '-' : '';
  const expChar = format === 'E' || format === 'G' ? 'E' : 'e';
  if (lower === 'e') return sign + layoutE(digits, prec, expChar);
  if (lower === 'f') return sign + layoutF(digits, prec);

  let exponentLimit = prec;
  if (exponentLimit > digits.digits.length && digits.digits.length >= digits.dp) exponentLimit = digits.digits.length;
  if (shortest) exponentLimit = 6;
  const exp = digits.dp - 1;
  if (exp < -4 || exp >= exponentLimit) {
    if (prec > digits.digits.length) prec = digits.digits.length;
    return sign + layoutE(digits, prec - 1, expChar);
  }
  if (prec > digits.dp) prec = digits.digits.length;
  return sign + layoutF(digits, Math.max(prec - digits.dp, 0));
}

function layoutE(d: Decimal, prec: number, expChar: string): string {
  let out = d.digits.length === 0 ? '0' : d.digits[0]!;
  if (prec > 0) {
    out += '.';
    const fraction = d.digits.slice(1, Math.min(d.digits.length, prec + 1));
    out += fraction + '0'.repeat(prec - fraction.length);
  }
  const exp = d.digits.length === 0 ? 0 : d.dp - 1;
  const expSign = exp < 0 ? '-' : '+';
  const expDigits = String(Math.abs(exp)).padStart(2, '0');
  return `${out}${expChar}${expSign}${expDigits}`;
}

function layoutF(d: Decimal, prec: number): string {
  let out: string;
  if (d.dp > 0) {
    const m = Math.min(d.digits.length, d.dp);
    out = d.digits.slice(0, m) + '0'.repeat(d.dp - m);
  } else {
    out = '0';
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
