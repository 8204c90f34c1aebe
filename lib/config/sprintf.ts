import { canBackquote, compareUtf8, isGoPrintable, quoteGoString, quoteRune } from '../go/gostring.js';
import { formatFloat } from '../go/strconv.js';

/**
 * Go's `fmt.Sprintf` for the values a configuration expression can hold, used by
 * `string.format`. Verbs: `%v %+v %#v %T %s %q %d %b %o %O %x %X %c %U %t %e %E %f %F %g %G %%`
 * with the flags `+ - # 0` and space, width and precision (numbers or `*`). Wrong verbs, missing
 * and extra arguments are written inline the way Go writes them (`%!d(string=a)`,
 * `%!s(MISSING)`, `%!(EXTRA int=1)`). Not supported: explicit argument indexes (`%[1]d`) and
 * the hexadecimal float verbs.
 */

/** An argument as Go's fmt sees it after the reference decodes it into `interface{}`. */
export type FmtValue =
  | { readonly kind: 'int'; readonly value: number }
  | { readonly kind: 'float'; readonly value: number }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'bool'; readonly value: boolean }
  | { readonly kind: 'nil' }
  | { readonly kind: 'slice'; readonly items: readonly FmtValue[] }
  | { readonly kind: 'map'; readonly entries: readonly (readonly [string, FmtValue])[] }
  /** Values with no Go-visible structure (capsules, functions): printed as `text`. */
  | { readonly kind: 'opaque'; readonly type: string; readonly text: string };

interface Spec {
  plus: boolean;
  minus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  width?: number;
  precision?: number;
}

function goTypeName(v: FmtValue): string {
  switch (v.kind) {
    case 'int':
      return 'int';
    case 'float':
      return 'float64';
    case 'string':
      return 'string';
    case 'bool':
      return 'bool';
    case 'nil':
      return '<nil>';
    case 'slice':
      return '[]interface {}';
    case 'map':
      return 'map[string]interface {}';
    case 'opaque':
      return v.type;
  }
}

/**
 * `fmt.Sprintf(format, args...)`.
 *
 * @example goSprintf('%s=%d', [{ kind: 'string', value: 'a' }, { kind: 'int', value: 1 }]) // 'a=1'
 */
export function goSprintf(format: string, args: readonly FmtValue[]): string {
  let out = '';
  let argIndex = 0;
  let i = 0;
  while (i < format.length) {
    const percent = format.indexOf('%', i);
    if (percent < 0) {
      out += format.slice(i);
      break;
    }
    out += format.slice(i, percent);
    i = percent + 1;

    const spec: Spec = { plus: false, minus: false, sharp: false, space: false, zero: false };
    flags: for (; i < format.length; i++) {
      switch (format[i]) {
        case '+':
          spec.plus = true;
          break;
        case '-':
          spec.minus = true;
          break;
        case '#':
          spec.sharp = true;
          break;
        case ' ':
          spec.space = true;
          break;
        case '0':
          spec.zero = true;
          break;
        default:
          break flags;
      }
    }

    const readNumber = (): number | undefined => {
      const start = i;
      while (i < format.length && format[i]! >= '0' && format[i]! <= '9') i++;
      return i > start ? Number(format.slice(start, i)) : undefined;
    };
    let badWidth = false;
    let badPrecision = false;
    if (format[i] === '*') {
      i++;
      const arg = args[argIndex++];
      if (arg?.kind === 'int') {
        spec.width = arg.value;
        if (spec.width < 0) {
          spec.minus = true;
          spec.width = -spec.width;
        }
      } else badWidth = true;
    } else {
      spec.width = readNumber();
    }
    if (format[i] === '.') {
      i++;
      if (format[i] === '*') {
        i++;
        const arg = args[argIndex++];
        if (arg?.kind === 'int' && arg.value >= 0) spec.precision = arg.value;
        else badPrecision = true;
      } else {
        spec.precision = readNumber() ?? 0;
      }
    }
    if (spec.minus) spec.zero = false;

    if (i >= format.length) {
      out += '%!(NOVERB)';
      break;
    }
    const verb = String.fromCodePoint(format.codePointAt(i)!);
    i += verb.length;
    if (badWidth) out += '%!(BADWIDTH)';
    if (badPrecision) out += '%!(BADPREC)';
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (argIndex >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += formatArg(args[argIndex++]!, verb, spec);
  }
  if (argIndex < args.length) {
    const extra = args.slice(argIndex).map((a) => (a.kind === 'nil' ? '<nil>' : `${goTypeName(a)}=${formatArg(a, 'v', plainSpec())}`));
    out += `%!(EXTRA ${extra.join(', ')})`;
  }
  return out;
}

function plainSpec(): Spec {
  return { plus: false, minus: false, sharp: false, space: false, zero: false };
}

function badVerb(v: FmtValue, verb: string): string {
  if (v.kind === 'nil') return `%!${verb}(<nil>)`;
  return `%!${verb}(${goTypeName(v)}=${formatArg(v, 'v', plainSpec())})`;
}

function formatArg(v: FmtValue, verb: string, spec: Spec): string {
  if (verb === 'T') return pad(goTypeName(v), spec);
  switch (v.kind) {
    case 'nil':
      return verb === 'v' ? pad('<nil>', spec) : badVerb(v, verb);
    case 'bool':
      return verb === 'v' || verb === 't' ? pad(String(v.value), spec) : badVerb(v, verb);
    case 'int':
      return formatInt(v.value, verb, spec) ?? badVerb(v, verb);
    case 'float':
      return formatFloatVerb(v.value, verb, spec) ?? badVerb(v, verb);
    case 'string':
      return formatString(v.value, verb, spec) ?? badVerb(v, verb);
    case 'slice':
      return formatSlice(v.items, verb, spec);
    case 'map':
      return formatMap(v.entries, verb, spec);
    case 'opaque':
      return pad(v.text, spec);
  }
}

function formatSlice(items: readonly FmtValue[], verb: string, spec: Spec): string {
  if (verb === 'v' && spec.sharp) {
    return `[]interface {}{${items.map((item) => goSyntax(item)).join(', ')}}`;
  }
  return `[${items.map((item) => (item.kind === 'nil' ? '<nil>' : formatArg(item, verb, spec))).join(' ')}]`;
}

function formatMap(entries: readonly (readonly [string, FmtValue])[], verb: string, spec: Spec): string {
  const sorted = [...entries].sort(([a], [b]) => compareUtf8(a, b));
  if (verb === 'v' && spec.sharp) {
    return `map[string]interface {}{${sorted.map(([k, item]) => `${quoteGoString(k)}:${goSyntax(item)}`).join(', ')}}`;
  }
  const key = (k: string): string => formatArg({ kind: 'string', value: k }, verb, spec);
  const val = (item: FmtValue): string => (item.kind === 'nil' ? '<nil>' : formatArg(item, verb, spec));
  return `map[${sorted.map(([k, item]) => `${key(k)}:${val(item)}`).join(' ')}]`;
}

/** `%#v`: the value as Go syntax. */
function goSyntax(v: FmtValue): string {
  switch (v.kind) {
    case 'nil':
      return 'interface {}(nil)';
    case 'string':
      return quoteGoString(v.value);
    case 'int':
      return String(v.value);
    case 'float':
      return formatFloat(v.value, 'g', -1);
    case 'bool':
      return String(v.value);
    case 'slice':
      return formatSlice(v.items, 'v', { ...plainSpec(), sharp: true });
    case 'map':
      return formatMap(v.entries, 'v', { ...plainSpec(), sharp: true });
    case 'opaque':
      return v.text;
  }
}

function pad(text: string, spec: Spec, zeroAllowed = true): string {
  const width = spec.width ?? 0;
  const length = [...text].length;
  if (length >= width) return text;
  const fill = (spec.zero && zeroAllowed ? '0' : ' ').repeat(width - length);
  return spec.minus ? text + ' '.repeat(width - length) : fill + text;
}

function formatString(s: string, verb: string, spec: Spec): string | undefined {
  switch (verb) {
    case 'v':
      if (spec.sharp) return pad(quoteGoString(s), spec);
      return pad(truncate(s, spec.precision), spec);
    case 's':
      return pad(truncate(s, spec.precision), spec);
    case 'q': {
      const text = truncate(s, spec.precision);
      return pad(spec.sharp && canBackquote(text) ? '`' + text + '`' : quoteGoString(text, spec.plus), spec);
    }
    case 'x':
    case 'X':
      return pad(hexBytes(new TextEncoder().encode(truncate(s, spec.precision)), verb, spec), spec);
    default:
      return undefined;
  }
}

function truncate(s: string, precision: number | undefined): string {
  if (precision === undefined) return s;
  return [...s].slice(0, precision).join('');
}

function hexBytes(bytes: Uint8Array, verb: string, spec: Spec): string {
  const digits = verb === 'X' ? '0123456789ABCDEF' : '0123456789abcdef';
  const prefix = verb === 'X' ? '0X' : '0x';
  let out = '';
  bytes.forEach((b, k) => {
    if (spec.space && k > 0) out += ' ';
    if (spec.sharp && (spec.space || k === 0)) out += prefix;
    out += digits[b >> 4]! + digits[b & 0xf]!;
  });
  return out;
}

function formatInt(n: number, verb: string, spec: Spec): string | undefined {
  switch (verb) {
    case 'v':
    case 'd':
      return integer(n, 10, spec, '');
    case 'b':
      return integer(n, 2, spec, spec.sharp ? '0b' : '');
    case 'o':
      return integer(n, 8, spec, spec.sharp ? '0' : '');
    case 'O':
      return integer(n, 8, spec, '0o');
    case 'x':
      return integer(n, 16, spec, spec.sharp ? '0x' : '');
    case 'X':
      return integer(n, 16, spec, spec.sharp ? '0X' : '').toUpperCase();
    case 'c':
      return pad(validRune(n) ? String.fromCodePoint(n) : '\ufffd', spec);
    case 'q':
      return pad(quoteRune(validRune(n) ? n : 0xfffd), spec);
    case 'U': {
      const hex = 'U+' + Math.abs(n).toString(16).toUpperCase().padStart(4, '0');
      return pad(spec.sharp && validRune(n) && isGoPrintable(n) ? `${hex} '${String.fromCodePoint(n)}'` : hex, spec);
    }
    default:
      return undefined;
  }
}

function validRune(n: number): boolean {
  return Number.isInteger(n) && n >= 0 && n <= 0x10ffff && !(n >= 0xd800 && n < 0xe000);
}

function integer(n: number, base: number, spec: Spec, prefix: string): string {
  const negative = n < 0;
  let digits = BigInt(Math.trunc(Math.abs(n))).toString(base);
  let precision = spec.precision;
  if (precision === 0 && n === 0) digits = '';
  // Zero padding is a minimum digit count that leaves room for the sign (but, as in Go, not
  // for a `0x` prefix: `%#08x` of 255 is `0x000000ff`).
  if (precision === undefined && spec.zero && spec.width !== undefined) {
    precision = spec.width - (negative || spec.plus || spec.space ? 1 : 0);
  }
  if (precision !== undefined && digits.length < precision) digits = '0'.repeat(precision - digits.length) + digits;
  const sign = negative ? '-' : spec.plus ? '+' : spec.space ? ' ' : '';
  return pad(sign + prefix + digits, spec, false);
}

function formatFloatVerb(x: number, verb: string, spec: Spec): string | undefined {
  let text: string;
  switch (verb) {
    case 'v':
      text = formatFloat(x, 'g', spec.precision ?? -1);
      break;
    case 'e':
    case 'E':
      text = formatFloat(x, verb, spec.precision ?? 6);
      break;
    case 'f':
    case 'F':
      text = formatFloat(x, 'f', spec.precision ?? 6);
      break;
    case 'g':
    case 'G':
      text = formatFloat(x, verb, spec.precision ?? -1);
      break;
    default:
      return undefined;
  }
  let sign = '';
  if (text[0] === '-' || text[0] === '+') {
    sign = text[0];
    text = text.slice(1);
  }
  if (text === 'Inf' || text === 'NaN') {
    if (text === 'NaN') sign = spec.plus ? '+' : spec.space ? ' ' : '';
    else if (sign === '+' && spec.space && !spec.plus) sign = ' ';
    return pad(sign + text, spec, false);
  }
  if (sign === '' && spec.plus) sign = '+';
  else if (sign === '' && spec.space) sign = ' ';
  const width = spec.width ?? 0;
  const length = sign.length + text.length;
  if (spec.zero && !spec.minus && length < width) return sign + '0'.repeat(width - length) + text;
  return pad(sign + text, spec, false);
}
