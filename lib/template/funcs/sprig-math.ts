/**
 * sprig v3.3.0 arithmetic and number conversion. Integer functions work in int64 (wrapping on
 * overflow, as Go does) and accept numeric strings; the `…f` functions go through
 * shopspring/decimal, so `addf 0.1 0.2` is exactly `0.3` and `divf` rounds to 16 places.
 */
import { randomInt } from 'node:crypto';
import { currentMeter } from '../budget.js';
import { GoError } from '../errors.js';
import { defineFunc, type FuncMap } from '../func.js';
import { Sprint } from '../gofmt.js';
import { parseGoInt } from '../../go/strconv.js';
import { type GoInt, T_ANY, T_FLOAT64, T_INT, T_SLICE_INT, T_STRING, int64Of, intOf, tagType } from '../values.js';
import { toFloat64, toInt64 } from './convert.js';
import { goFields, goTrim } from './gostrings.js';

const A = T_ANY;
const I = T_INT;

const wrap64 = (n: bigint): GoInt => int64Of(BigInt.asIntN(64, n));

// ---------------------------------------------------------------------------------------------
// shopspring/decimal, as far as execDecimalOp needs it

/** coef × 10^exp */
interface Dec {
  readonly coef: bigint;
  readonly exp: number;
}

const DIVISION_PRECISION = 16;

function decFromFloat(f: number): Dec {
  if (!Number.isFinite(f)) throw new GoError(`Cannot create a Decimal from ${Sprint(f)}`);
  if (f === 0) return { coef: 0n, exp: 0 };
  const s = f.toExponential();
  const e = s.indexOf('e');
  const mantissa = s.slice(0, e).replace('.', '');
  const digits = mantissa.replace('-', '');
  return { coef: BigInt(mantissa), exp: Number(s.slice(e + 1)) - (digits.length - 1) };
}

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

function align(a: Dec, b: Dec): [bigint, bigint, number] {
  const exp = Math.min(a.exp, b.exp);
  return [a.coef * pow10(a.exp - exp), b.coef * pow10(b.exp - exp), exp];
}

const decAdd = (a: Dec, b: Dec): Dec => {
  const [x, y, exp] = align(a, b);
  return { coef: x + y, exp };
};
const decSub = (a: Dec, b: Dec): Dec => {
  const [x, y, exp] = align(a, b);
  return { coef: x - y, exp };
};
const decMul = (a: Dec, b: Dec): Dec => ({ coef: a.coef * b.coef, exp: a.exp + b.exp });

/** Decimal.Div: DivRound to 16 places, halves away from zero. */
function decDiv(a: Dec, b: Dec): Dec {
  if (b.coef === 0n) throw new GoError('decimal division by zero');
  const shift = a.exp - b.exp + DIVISION_PRECISION;
  let num = a.coef;
  let den = b.coef;
  if (shift >= 0) num *= pow10(shift);
  else den *= pow10(-shift);
  let q = num / den;
  const r = num - q * den;
  const absR = r < 0n ? -r : r;
  const absDen = den < 0n ? -den : den;
  if (2n * absR >= absDen) q += num < 0n !== den < 0n ? -1n : 1n;
  return { coef: q, exp: -DIVISION_PRECISION };
}

function decToFloat(d: Dec): number {
  return Number(`${d.coef}e${d.exp}`);
}

function execDecimalOp(first: unknown, rest: readonly unknown[], op: (a: Dec, b: Dec) => Dec): number {
  let acc = decFromFloat(toFloat64(first));
  for (const x of rest) acc = op(acc, decFromFloat(toFloat64(x)));
  return decToFloat(acc);
}

// ---------------------------------------------------------------------------------------------

/** sprig's untilStep (behind until and seq); the list's length is checked against the budget first. */
function untilStep(start: number, stop: number, step: number): GoInt[] {
  const out: GoInt[] = [];
  if (stop < start) {
    if (step >= 0) return out;
    currentMeter().checkLength(Math.ceil((start - stop) / -step));
    for (let i = start; i > stop; i += step) out.push(intOf(i));
    return out;
  }
  if (step <= 0) return out;
  currentMeter().checkLength(Math.ceil((stop - start) / step));
  for (let i = start; i < stop; i += step) out.push(intOf(i));
  return out;
}

const intSlice = (items: GoInt[]): GoInt[] => tagType(items, T_SLICE_INT);

function seq(...params: GoInt[]): string {
  const p = params.map((x) => Number(x.value));
  let values: GoInt[];
  switch (p.length) {
    case 1: {
      const end = p[0]!;
      const inc = end < 1 ? -1 : 1;
      values = untilStep(1, end + inc, inc);
      break;
    }
    case 2: {
      const [start, end] = p as [number, number];
      const step = end < start ? -1 : 1;
      values = untilStep(start, end + step, step);
      break;
    }
    case 3: {
      const [start, step, end] = p as [number, number, number];
      let inc = 1;
      if (end < start) {
        inc = -1;
        if (step > 0) return '';
      }
      values = untilStep(start, end + inc, step);
      break;
    }
    default:
      return '';
  }
  return goTrim(goFields(Sprint(intSlice(values))).join(' '), '[]');
}

function round(a: unknown, p: GoInt, ...rOpt: number[]): number {
  const roundOn = rOpt.length > 0 ? rOpt[0]! : 0.5;
  const val = toFloat64(a);
  const pow = 10 ** Number(p.value);
  const digit = pow * val;
  const frac = digit - Math.trunc(digit);
  const rounded = frac >= roundOn ? Math.ceil(digit) : Math.floor(digit);
  return rounded / pow;
}

function toDecimal(v: unknown): GoInt {
  const parsed = parseGoInt(Sprint(v), 8);
  return int64Of('error' in parsed ? 0n : parsed.value);
}

function atoi(a: string): GoInt {
  const parsed = parseGoInt(a, 10);
  if ('error' in parsed) return intOf(parsed.error === 'range' ? parsed.value : 0n);
  return intOf(parsed.value);
}

function div(a: unknown, b: unknown): GoInt {
  const x = toInt64(a);
  const y = toInt64(b);
  if (y === 0n) throw new GoError('runtime error: integer divide by zero');
  return wrap64(x / y);
}

function mod(a: unknown, b: unknown): GoInt {
  const x = toInt64(a);
  const y = toInt64(b);
  if (y === 0n) throw new GoError('runtime error: integer divide by zero');
  return wrap64(x % y);
}

function randIntBetween(min: GoInt, max: GoInt): GoInt {
  const n = max.value - min.value;
  if (n <= 0n) throw new GoError('invalid argument to Intn');
  const pick = n <= 281474976710655n ? BigInt(randomInt(Number(n))) : BigInt(Math.floor(Math.random() * Number(n)));
  return intOf(pick + min.value);
}

/** sprig's math and conversion functions. */
export const sprigMathFuncs: FuncMap = {
  atoi: defineFunc([T_STRING], atoi),
  int64: defineFunc([A], (v: unknown) => int64Of(toInt64(v))),
  int: defineFunc([A], (v: unknown) => intOf(toInt64(v))),
  float64: defineFunc([A], toFloat64),
  seq: defineFunc([I], seq, true),
  toDecimal: defineFunc([A], toDecimal),
  until: defineFunc([I], (count: GoInt) => intSlice(untilStep(0, Number(count.value), count.value < 0n ? -1 : 1))),
  untilStep: defineFunc([I, I, I], (start: GoInt, stop: GoInt, step: GoInt) =>
    intSlice(untilStep(Number(start.value), Number(stop.value), Number(step.value))),
  ),
  add1: defineFunc([A], (i: unknown) => wrap64(toInt64(i) + 1n)),
  add: defineFunc([A], (...items: unknown[]) => wrap64(items.reduce<bigint>((acc, b) => BigInt.asIntN(64, acc + toInt64(b)), 0n)), true),
  sub: defineFunc([A, A], (a: unknown, b: unknown) => wrap64(toInt64(a) - toInt64(b))),
  div: defineFunc([A, A], div),
  mod: defineFunc([A, A], mod),
  mul: defineFunc(
    [A, A],
    (a: unknown, ...rest: unknown[]) => wrap64(rest.reduce<bigint>((acc, b) => BigInt.asIntN(64, acc * toInt64(b)), toInt64(a))),
    true,
  ),
  randInt: defineFunc([I, I], randIntBetween),
  add1f: defineFunc([A], (i: unknown) => execDecimalOp(i, [intOf(1)], decAdd)),
  addf: defineFunc([A], (...items: unknown[]) => execDecimalOp(0, items, decAdd), true),
  subf: defineFunc([A, A], (a: unknown, ...v: unknown[]) => execDecimalOp(a, v, decSub), true),
  divf: defineFunc([A, A], (a: unknown, ...v: unknown[]) => execDecimalOp(a, v, decDiv), true),
  mulf: defineFunc([A, A], (a: unknown, ...v: unknown[]) => execDecimalOp(a, v, decMul), true),
  biggest: defineFunc(
    [A, A],
    (a: unknown, ...rest: unknown[]) => int64Of(rest.map(toInt64).reduce((x, y) => (y > x ? y : x), toInt64(a))),
    true,
  ),
  max: defineFunc(
    [A, A],
    (a: unknown, ...rest: unknown[]) => int64Of(rest.map(toInt64).reduce((x, y) => (y > x ? y : x), toInt64(a))),
    true,
  ),
  min: defineFunc(
    [A, A],
    (a: unknown, ...rest: unknown[]) => int64Of(rest.map(toInt64).reduce((x, y) => (y < x ? y : x), toInt64(a))),
    true,
  ),
  maxf: defineFunc([A, A], (a: unknown, ...rest: unknown[]) => rest.map(toFloat64).reduce(goMax, toFloat64(a)), true),
  minf: defineFunc([A, A], (a: unknown, ...rest: unknown[]) => rest.map(toFloat64).reduce(goMin, toFloat64(a)), true),
  ceil: defineFunc([A], (a: unknown) => Math.ceil(toFloat64(a))),
  floor: defineFunc([A], (a: unknown) => Math.floor(toFloat64(a))),
  round: defineFunc([A, I, T_FLOAT64], round, true),
};

/** Go's math.Max: NaN wins, +0 beats -0. */
function goMax(x: number, y: number): number {
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (x === 0 && y === 0) return Object.is(x, -0) ? y : x;
  return x > y ? x : y;
}

function goMin(x: number, y: number): number {
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (x === 0 && y === 0) return Object.is(x, -0) ? x : y;
  return x < y ? x : y;
}
