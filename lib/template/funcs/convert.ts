/**
 * Value conversions sprig relies on: spf13/cast's `ToInt64`/`ToInt`/`ToFloat64` (as sprig v3.3.0
 * pins it: strings parsed with Go literal syntax after dropping a `.000` tail, errors become 0),
 * sprig's `strval`, and small helpers for Go's panics and kind names.
 */
import { GoError } from '../errors.js';
import { Sprintf } from '../gofmt.js';
import { parseGoFloat, parseGoInt } from '../../go/strconv.js';
import { GoInt, GoObject, kindOf, type Kind } from '../values.js';

const INT64_MIN = -(1n << 63n);

/** Go's conversion `int64(f)` of a float64 (amd64: out of range gives the minimum int64). */
export function floatToInt64(f: number): bigint {
  if (!Number.isFinite(f) || f >= 2 ** 63 || f < -(2 ** 63)) return INT64_MIN;
  return BigInt(Math.trunc(f));
}

/** cast's trimZeroDecimal: `12.000` → `12` (only an all-zero fraction is dropped). */
function trimZeroDecimal(s: string): string {
  let foundZero = false;
  for (let i = s.length; i > 0; i--) {
    const c = s[i - 1];
    if (c === '.') {
      if (foundZero) return s.slice(0, i - 1);
    } else if (c === '0') {
      foundZero = true;
    } else {
      return s;
    }
  }
  return s;
}

/** cast.ToInt64 (and ToInt: Go's int is 64 bits wide here). */
export function toInt64(v: unknown): bigint {
  switch (typeof v) {
    case 'number':
      return floatToInt64(v);
    case 'boolean':
      return v ? 1n : 0n;
    case 'string': {
      const parsed = parseGoInt(trimZeroDecimal(v), 0);
      return 'error' in parsed ? 0n : parsed.value;
    }
    case 'object':
      if (v instanceof GoInt) return BigInt.asIntN(64, v.value);
  }
  return 0n;
}

/** cast.ToFloat64. */
export function toFloat64(v: unknown): number {
  switch (typeof v) {
    case 'number':
      return v;
    case 'boolean':
      return v ? 1 : 0;
    case 'string': {
      const parsed = parseGoFloat(v);
      return 'error' in parsed ? 0 : parsed.value;
    }
    case 'object':
      if (v instanceof GoInt) return Number(v.value);
  }
  return 0;
}

/** sprig's strval: strings as they are, Stringers through String(), everything else `%v`. */
export function strval(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof GoObject) {
    const s = v.toGoString();
    if (s !== undefined) return s;
  }
  return Sprintf('%v', v);
}

/** The panic Go raises when sprig calls `reflect.TypeOf(nil).Kind()`. */
export function nilDereference(): GoError {
  return new GoError('runtime error: invalid memory address or nil pointer dereference');
}

/** The reflect kind of a list argument; nil panics like sprig's `reflect.TypeOf(list).Kind()`. */
export function listKind(list: unknown): Kind {
  if (list === null || list === undefined) throw nilDereference();
  return kindOf(list);
}

/** Go's slice-bounds panic text. */
export function sliceBoundsError(detail: string): GoError {
  return new GoError(`runtime error: slice bounds out of range ${detail}`);
}
