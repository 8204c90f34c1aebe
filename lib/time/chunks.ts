/**
 * Splits a Go time layout into literal text and the standard chunks of the reference time
 * `Mon Jan 2 15:04:05 MST 2006`, with the same scan as Go's `nextStdChunk` (first match wins,
 * scanning left to right; `Jan`/`Mon` are not chunks when a lower-case letter follows, so
 * `Janet` and `Month` stay literal; `_2006` is a literal `_` then the year).
 */

/** Standard chunk kinds, named after Go's `std*` constants. */
export const Std = {
  LongMonth: 1, // January
  Month: 2, // Jan
  NumMonth: 3, // 1
  ZeroMonth: 4, // 01
  LongWeekDay: 5, // Monday
  WeekDay: 6, // Mon
  Day: 7, // 2
  UnderDay: 8, // _2
  ZeroDay: 9, // 02
  UnderYearDay: 10, // __2
  ZeroYearDay: 11, // 002
  Hour: 12, // 15
  Hour12: 13, // 3
  ZeroHour12: 14, // 03
  Minute: 15, // 4
  ZeroMinute: 16, // 04
  Second: 17, // 5
  ZeroSecond: 18, // 05
  LongYear: 19, // 2006
  Year: 20, // 06
  PM: 21, // PM
  pm: 22, // pm
  TZ: 23, // MST
  ISO8601TZ: 24, // Z0700
  ISO8601SecondsTZ: 25, // Z070000
  ISO8601ShortTZ: 26, // Z07
  ISO8601ColonTZ: 27, // Z07:00
  ISO8601ColonSecondsTZ: 28, // Z07:00:00
  NumTZ: 29, // -0700
  NumSecondsTZ: 30, // -070000
  NumShortTZ: 31, // -07
  NumColonTZ: 32, // -07:00
  NumColonSecondsTZ: 33, // -07:00:00
  FracSecond0: 34, // .000 or ,000
  FracSecond9: 35, // .999 or ,999
} as const;

export type StdKind = (typeof Std)[keyof typeof Std];

/** One step of a layout: literal text, then a standard chunk (absent on the final step). */
export interface LayoutStep {
  /** Literal layout text before the chunk. */
  readonly prefix: string;
  /** The chunk kind; 0 on the final step, which only carries trailing literal text. */
  readonly std: StdKind | 0;
  /** The chunk as written in the layout (`"Jan"`, `".000"`), used in error messages. */
  readonly text: string;
  /** Fraction chunks: the number of digits. */
  readonly digits: number;
  /** Fraction chunks: the separator the layout uses (`.` or `,`) — used when formatting. */
  readonly separator: string;
}

const STD_0X: readonly StdKind[] = [Std.ZeroMonth, Std.ZeroDay, Std.ZeroHour12, Std.ZeroMinute, Std.ZeroSecond, Std.Year];

function isDigitAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
}

function startsWithLowerCaseAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 97 && c <= 122;
}

interface Found {
  readonly start: number;
  readonly end: number;
  readonly std: StdKind;
  readonly digits: number;
  readonly separator: string;
  /** Where the literal prefix ends (differs from `start` only for `_2006`). */
  readonly prefixEnd: number;
}

function found(start: number, end: number, std: StdKind, prefixEnd = start): Found {
  return { start, end, std, digits: 0, separator: '', prefixEnd };
}

/** Go's nextStdChunk over `layout` starting at `from`. */
function nextStdChunk(layout: string, from: number): Found | undefined {
  const n = layout.length;
  for (let i = from; i < n; i++) {
    switch (layout[i]) {
      case 'J':
        if (layout.startsWith('Jan', i)) {
          if (layout.startsWith('January', i)) return found(i, i + 7, Std.LongMonth);
          if (!startsWithLowerCaseAt(layout, i + 3)) return found(i, i + 3, Std.Month);
        }
        break;
      case 'M':
        if (i + 3 <= n) {
          if (layout.startsWith('Mon', i)) {
            if (layout.startsWith('Monday', i)) return found(i, i + 6, Std.LongWeekDay);
            if (!startsWithLowerCaseAt(layout, i + 3)) return found(i, i + 3, Std.WeekDay);
          }
          if (layout.startsWith('MST', i)) return found(i, i + 3, Std.TZ);
        }
        break;
      case '0': {
        const c = layout.charCodeAt(i + 1);
        if (c >= 49 && c <= 54) return found(i, i + 2, STD_0X[c - 49]!);
        if (layout[i + 1] === '0' && layout[i + 2] === '2') return found(i, i + 3, Std.ZeroYearDay);
        break;
      }
      case '1':
        if (layout[i + 1] === '5') return found(i, i + 2, Std.Hour);
        return found(i, i + 1, Std.NumMonth);
      case '2':
        if (layout.startsWith('2006', i)) return found(i, i + 4, Std.LongYear);
        return found(i, i + 1, Std.Day);
      case '_':
        if (layout[i + 1] === '2') {
          // `_2006` is a literal underscore followed by the long year.
          if (layout.startsWith('2006', i + 1)) return found(i + 1, i + 5, Std.LongYear, i + 1);
          return found(i, i + 2, Std.UnderDay);
        }
        if (layout[i + 1] === '_' && layout[i + 2] === '2') return found(i, i + 3, Std.UnderYearDay);
        break;
      case '3':
        return found(i, i + 1, Std.Hour12);
      case '4':
        return found(i, i + 1, Std.Minute);
      case '5':
        return found(i, i + 1, Std.Second);
      case 'P':
        if (layout[i + 1] === 'M') return found(i, i + 2, Std.PM);
        break;
      case 'p':
        if (layout[i + 1] === 'm') return found(i, i + 2, Std.pm);
        break;
      case '-':
        if (layout.startsWith('-070000', i)) return found(i, i + 7, Std.NumSecondsTZ);
        if (layout.startsWith('-07:00:00', i)) return found(i, i + 9, Std.NumColonSecondsTZ);
        if (layout.startsWith('-0700', i)) return found(i, i + 5, Std.NumTZ);
        if (layout.startsWith('-07:00', i)) return found(i, i + 6, Std.NumColonTZ);
        if (layout.startsWith('-07', i)) return found(i, i + 3, Std.NumShortTZ);
        break;
      case 'Z':
        if (layout.startsWith('Z070000', i)) return found(i, i + 7, Std.ISO8601SecondsTZ);
        if (layout.startsWith('Z07:00:00', i)) return found(i, i + 9, Std.ISO8601ColonSecondsTZ);
        if (layout.startsWith('Z0700', i)) return found(i, i + 5, Std.ISO8601TZ);
        if (layout.startsWith('Z07:00', i)) return found(i, i + 6, Std.ISO8601ColonTZ);
        if (layout.startsWith('Z07', i)) return found(i, i + 3, Std.ISO8601ShortTZ);
        break;
      case '.':
      case ',': {
        const ch = layout[i + 1];
        if (ch === '0' || ch === '9') {
          let j = i + 1;
          while (j < n && layout[j] === ch) j++;
          // Only a run of digits that ends here is a fraction (`.0001` is not).
          if (!isDigitAt(layout, j)) {
            const std = ch === '0' ? Std.FracSecond0 : Std.FracSecond9;
            return { start: i, end: j, std, digits: j - (i + 1), separator: layout[i]!, prefixEnd: i };
          }
        }
        break;
      }
    }
  }
  return undefined;
}

/** The steps of a layout, in order; the last step has `std` 0. */
export function layoutSteps(layout: string): LayoutStep[] {
  const steps: LayoutStep[] = [];
  let at = 0;
  for (;;) {
    const f = nextStdChunk(layout, at);
    if (f === undefined) {
      steps.push({ prefix: layout.slice(at), std: 0, text: '', digits: 0, separator: '' });
      return steps;
    }
    steps.push({
      prefix: layout.slice(at, f.prefixEnd),
      std: f.std,
      text: layout.slice(f.start, f.end),
      digits: f.digits,
      separator: f.separator,
    });
    at = f.end;
  }
}

/** Whether a layout has a year chunk (`2006` or `06`). */
export function stepsHaveYear(steps: readonly LayoutStep[]): boolean {
  return steps.some((s) => s.std === Std.LongYear || s.std === Std.Year);
}
