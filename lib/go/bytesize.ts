/**
 * Base-2 byte sizes as the reference reads them (alecthomas/units `ParseBase2Bytes`), used by
 * `stage.truncate` `limit` and `stage.drop` `longer_than`.
 */

/** A size string the reference rejects; `message` is the library's own error text. */
export class ByteSizeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ByteSizeError';
  }
}

const KIB = 1024;

// The library tries the `KiB` family first and then the `KB` family; each family also has `B`.
// Units from the two families can therefore not be mixed in one string (`1KiB1KB` fails).
const IEC_UNITS: ReadonlyMap<string, number> = unitFamily('iB');
const LEGACY_UNITS: ReadonlyMap<string, number> = unitFamily('B');

function unitFamily(suffix: string): ReadonlyMap<string, number> {
  return new Map([
    ['B', 1],
    [`K${suffix}`, KIB],
    [`M${suffix}`, KIB ** 2],
    [`G${suffix}`, KIB ** 3],
    [`T${suffix}`, KIB ** 4],
    [`P${suffix}`, KIB ** 5],
    [`E${suffix}`, KIB ** 6],
  ]);
}

const TWO_POW_63 = 2 ** 63;
// The library refuses to accumulate digit runs past this value.
const LEADING_INT_LIMIT = ((1n << 63n) - 10n) / 10n;

/**
 * Parses a base-2 size: an optional sign, then one or more `<digits>[.<digits>]<unit>` parts
 * that are summed. Units: `B`, `KiB`/`KB` (1024), `MiB`/`MB`, `GiB`/`GB`, `TiB`/`TB`,
 * `PiB`/`PB`, `EiB`/`EB`. `"0"` alone is 0; a bare number, `10b` and SI `1kB` are rejected.
 * The sum is accumulated in float64 and truncated to an integer, like the library
 * (`1.1KiB` → 1126).
 *
 * @throws ByteSizeError with the library's message, e.g. `units: unknown unit kB in 1kB`
 * @example parseBase2Bytes('1KiB2B') === 1026n; parseBase2Bytes('0.5KiB') === 512n
 */
export function parseBase2Bytes(text: string): bigint {
  const first = parseWithUnits(text, IEC_UNITS);
  if (typeof first === 'bigint') return first;
  const second = parseWithUnits(text, LEGACY_UNITS);
  if (typeof second === 'bigint') return second;
  // The library reports the error of its second (legacy `KB`) attempt.
  throw new ByteSizeError(second.message);
}

interface ParseFailure {
  readonly message: string;
}

function parseWithUnits(text: string, units: ReadonlyMap<string, number>): bigint | ParseFailure {
  const invalid = { message: `units: invalid ${text}` };
  let s = text;
  let negative = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') return invalid;
  let total = 0;
  while (s !== '') {
    if (!(s[0] === '.' || isDigit(s[0]!))) return invalid;
    const whole = leadingInt(s);
    if (whole === undefined) return invalid;
    let part = Number(whole.value);
    const hasWhole = whole.rest.length !== s.length;
    s = whole.rest;

    let hasFraction = false;
    if (s !== '' && s[0] === '.') {
      s = s.slice(1);
      const fraction = leadingInt(s);
      if (fraction === undefined) return invalid;
      const digitCount = s.length - fraction.rest.length;
      let scale = 1;
      for (let n = digitCount; n > 0; n--) scale *= 10;
      part += Number(fraction.value) / scale;
      hasFraction = digitCount > 0;
      s = fraction.rest;
    }
    if (!hasWhole && !hasFraction) return invalid;

    let unitEnd = 0;
    while (unitEnd < s.length && !(s[unitEnd] === '.' || isDigit(s[unitEnd]!))) unitEnd++;
    const unitText = s.slice(0, unitEnd);
    s = s.slice(unitEnd);
    const unit = units.get(unitText);
    if (unit === undefined) return { message: `units: unknown unit ${unitText} in ${text}` };
    total += part * unit;
  }
  if (negative) total = -total;
  if (total < -TWO_POW_63 || total >= TWO_POW_63) return { message: 'units: overflow parsing unit' };
  return BigInt(Math.trunc(total));
}

/** A run of ASCII digits as an integer; `undefined` when it would exceed the library's int64 guard. */
function leadingInt(s: string): { value: bigint; rest: string } | undefined {
  let i = 0;
  let value = 0n;
  for (; i < s.length && isDigit(s[i]!); i++) {
    if (value >= LEADING_INT_LIMIT) return undefined;
    value = value * 10n + BigInt(s.charCodeAt(i) - 48);
  }
  return { value, rest: s.slice(i) };
}

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

const IEC_PREFIXES = ['', 'K', 'M', 'G', 'T', 'P', 'E'];

/**
 * The library's `Base2Bytes.String()`: non-zero components from largest to smallest with a
 * single leading sign, `0B` for zero.
 *
 * @example formatBase2Bytes(1025n) === '1KiB1B'; formatBase2Bytes(1048576n) === '1MiB'
 */
export function formatBase2Bytes(bytes: bigint): string {
  if (bytes === 0n) return '0B';
  const sign = bytes < 0n ? '-' : '';
  let rest = bytes < 0n ? -bytes : bytes;
  const parts: string[] = [];
  for (const [i, prefix] of IEC_PREFIXES.entries()) {
    const isLargest = i === IEC_PREFIXES.length - 1;
    const component = isLargest ? rest : rest % 1024n;
    if (component !== 0n) parts.unshift(`${component}${prefix}${prefix === '' ? 'B' : 'iB'}`);
    rest = isLargest ? 0n : rest / 1024n;
    if (rest === 0n) break;
  }
  return sign + parts.join('');
}
