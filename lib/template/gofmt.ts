/**
 * Go's `fmt.Sprint`, `fmt.Sprintln` and `fmt.Sprintf` over the template value model (see
 * `values.ts`): every verb, flag, width/precision form (`*`, `[n]` argument indexes) and error
 * marker (`%!d(string=x)`, `%!d(MISSING)`, `%!(EXTRA …)`, `%!(NOVERB)`, `%!(BADWIDTH)`) the way
 * Go prints them.
 *
 * @example Sprintf('%-5s|%05.1f|%x', 'ab', 3.14159, 'hi') // 'ab   |003.1|6869'
 */
import { formatFloat } from '../go/strconv.js';
import { currentMeter } from './budget.js';
import { canBackquote, isGoPrintable, quoteGoString, quoteRune } from '../go/gostring.js';
import { GoInt, GoObject, isGoMap, sortedKeys, typeName, typeOfValue, utf8Bytes } from './values.js';

const LOWER_HEX = '0123456789abcdefx';
const UPPER_HEX = '0123456789ABCDEFX';

/** Go's fmt flags and the output buffer of one print call. */
class Printer {
  out = '';
  plus = false;
  minus = false;
  sharp = false;
  space = false;
  zero = false;
  plusV = false;
  sharpV = false;
  wid = 0;
  prec = 0;
  widPresent = false;
  precPresent = false;
  private erroring = false;

  clearFlags(): void {
    this.plus = this.minus = this.sharp = this.space = this.zero = false;
    this.plusV = this.sharpV = false;
    this.wid = this.prec = 0;
    this.widPresent = this.precPresent = false;
  }

  // -------------------------------------------------------------------------------------------
  // Padding

  private writePadding(n: number): void {
    if (n <= 0) return;
    // Widths reach 1e6 (Go's cap) and a format may hold many: padding is what can grow without bound.
    const meter = currentMeter();
    if (meter.mayExceedBytes(this.out.length + n)) meter.checkBytes(this.out.length + n);
    this.out += (this.zero && !this.minus ? '0' : ' ').repeat(n);
  }

  private pad(s: string): void {
    if (!this.widPresent || this.wid === 0) {
      this.out += s;
      return;
    }
    const width = this.wid - runeCount(s);
    if (!this.minus) {
      this.writePadding(width);
      this.out += s;
    } else {
      this.out += s;
      this.writePadding(width);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Arguments

  printArg(arg: unknown, verb: string): void {
    if (arg === null || arg === undefined) {
      if (verb === 'T' || verb === 'v') this.pad('<nil>');
      else this.badVerb(verb, arg);
      return;
    }
    if (verb === 'T') {
      this.fmtS(typeName(arg));
      return;
    }
    if (verb === 'p') {
      this.fmtPointer(arg, 'p');
      return;
    }
    switch (typeof arg) {
      case 'boolean':
        this.fmtBool(arg, verb, arg);
        return;
      case 'number':
        this.fmtFloat(arg, verb, arg);
        return;
      case 'string':
        this.fmtString(arg, verb, arg);
        return;
    }
    if (arg instanceof GoInt) {
      this.fmtInteger(arg, verb, arg);
      return;
    }
    if (!this.handleMethods(arg, verb)) this.printValue(arg, verb, 0);
  }

  /** Stringer support: values with a `String()` method print it for `v s x X q`. */
  private handleMethods(arg: unknown, verb: string): boolean {
    if (this.erroring || this.sharpV || !(arg instanceof GoObject)) return false;
    if (verb !== 'v' && verb !== 's' && verb !== 'x' && verb !== 'X' && verb !== 'q') return false;
    const text = arg.toGoString();
    if (text === undefined) return false;
    this.fmtString(text, verb, text);
    return true;
  }

  printValue(value: unknown, verb: string, depth: number): void {
    if (depth > 0 && value !== null && value !== undefined && this.handleMethods(value, verb)) return;
    if (value === null || value === undefined) {
      // A nil element of an interface slice or map prints <nil> whatever the verb.
      this.out += this.sharpV ? 'interface {}(nil)' : '<nil>';
      return;
    }
    switch (typeof value) {
      case 'boolean':
        return this.fmtBool(value, verb, value);
      case 'number':
        return this.fmtFloat(value, verb, value);
      case 'string':
        return this.fmtString(value, verb, value);
      case 'function':
        return this.fmtPointer(value, verb);
    }
    if (value instanceof GoInt) return this.fmtInteger(value, verb, value);
    if (Array.isArray(value)) {
      if (this.sharpV) {
        this.out += typeName(value) + '{';
        value.forEach((item, i) => {
          if (i > 0) this.out += ', ';
          this.printValue(item, verb, depth + 1);
        });
        this.out += '}';
      } else {
        this.out += '[';
        value.forEach((item, i) => {
          if (i > 0) this.out += ' ';
          this.printValue(item, verb, depth + 1);
        });
        this.out += ']';
      }
      return;
    }
    if (value instanceof GoObject) {
      if (value.goType.kind === 'ptr' && depth === 0) this.out += '&';
      if (this.sharpV) this.out += value.goType.name.replace(/^\*/, '');
      this.out += '{';
      value.fields().forEach(([name, field], i) => {
        if (i > 0) this.out += this.sharpV ? ', ' : ' ';
        if (this.plusV || this.sharpV) this.out += name + ':';
        this.printValue(field, verb, depth + 1);
      });
      this.out += '}';
      return;
    }
    if (isGoMap(value)) {
      this.out += this.sharpV ? typeName(value) + '{' : 'map[';
      sortedKeys(value).forEach((key, i) => {
        if (i > 0) this.out += this.sharpV ? ', ' : ' ';
        this.printValue(key, verb, depth + 1);
        this.out += ':';
        this.printValue(value[key], verb, depth + 1);
      });
      this.out += this.sharpV ? '}' : ']';
      return;
    }
    this.out += '?';
  }

  private badVerb(verb: string, arg: unknown): void {
    this.erroring = true;
    this.out += '%!' + verb + '(';
    if (arg === null || arg === undefined) {
      this.out += '<nil>';
    } else {
      this.out += typeName(arg) + '=';
      const [sharpV, plusV] = [this.sharpV, this.plusV];
      this.printArg(arg, 'v');
      [this.sharpV, this.plusV] = [sharpV, plusV];
    }
    this.out += ')';
    this.erroring = false;
  }

  private fmtPointer(value: unknown, verb: string): void {
    const kind = typeOfValue(value)?.kind;
    if (kind !== 'slice' && kind !== 'map' && kind !== 'func' && kind !== 'ptr') {
      this.badVerb(verb, value);
      return;
    }
    // Addresses differ on every run in Go too; print a stable, plausible one.
    const address = 0xc000010000n;
    switch (verb) {
      case 'v':
        if (this.sharpV) this.out += `(${typeName(value)})(0x${address.toString(16)})`;
        else this.pad('0x' + address.toString(16));
        return;
      case 'p':
        this.fmtUnsigned(address, 16, 'v', LOWER_HEX, !this.sharp);
        return;
      case 'b':
      case 'o':
      case 'd':
      case 'x':
      case 'X':
        this.fmtUnsigned(
          address,
          verb === 'b' ? 2 : verb === 'o' ? 8 : verb === 'd' ? 10 : 16,
          verb,
          verb === 'X' ? UPPER_HEX : LOWER_HEX,
          false,
        );
        return;
      default:
        this.badVerb(verb, value);
    }
  }

  private fmtUnsigned(u: bigint, base: number, verb: string, digits: string, forceSharp: boolean): void {
    const sharp = this.sharp;
    if (forceSharp) this.sharp = true;
    this.formatInteger(u, false, base, verb, digits);
    this.sharp = sharp;
  }

  // -------------------------------------------------------------------------------------------
  // Basic kinds

  private fmtBool(v: boolean, verb: string, arg: unknown): void {
    if (verb === 't' || verb === 'v') this.pad(v ? 'true' : 'false');
    else this.badVerb(verb, arg);
  }

  private fmtInteger(v: GoInt, verb: string, arg: unknown): void {
    const signed = v.isSigned;
    const u = v.value;
    switch (verb) {
      case 'v':
        if (this.sharpV && !signed) this.fmtUnsigned(u, 16, 'v', LOWER_HEX, true);
        else this.formatInteger(u, signed, 10, verb, LOWER_HEX);
        return;
      case 'd':
        return this.formatInteger(u, signed, 10, verb, LOWER_HEX);
      case 'b':
        return this.formatInteger(u, signed, 2, verb, LOWER_HEX);
      case 'o':
      case 'O':
        return this.formatInteger(u, signed, 8, verb, LOWER_HEX);
      case 'x':
        return this.formatInteger(u, signed, 16, verb, LOWER_HEX);
      case 'X':
        return this.formatInteger(u, signed, 16, verb, UPPER_HEX);
      case 'c':
        return this.pad(String.fromCodePoint(validRune(asUint64(u))));
      case 'q':
        return this.pad(quoteRune(Number(asUint64(u) > 0x10ffffn ? 0xfffdn : asUint64(u)), this.plus));
      case 'U':
        return this.fmtUnicode(asUint64(u));
      default:
        this.badVerb(verb, arg);
    }
  }

  private formatInteger(value: bigint, signed: boolean, base: number, verb: string, digits: string): void {
    const negative = signed && value < 0n;
    let u = negative ? -value : value;
    let prec = 0;
    if (this.precPresent) {
      prec = this.prec;
      if (prec === 0 && u === 0n) {
        const zero = this.zero;
        this.zero = false;
        this.writePadding(this.wid);
        this.zero = zero;
        return;
      }
    } else if (this.zero && !this.minus && this.widPresent) {
      prec = this.wid;
      if (negative || this.plus || this.space) prec--;
    }
    let text = '';
    if (u === 0n) text = '0';
    const b = BigInt(base);
    while (u > 0n) {
      text = digits[Number(u % b)] + text;
      u /= b;
    }
    if (text.length < prec) text = '0'.repeat(prec - text.length) + text;
    if (this.sharp) {
      if (base === 2) text = '0b' + text;
      else if (base === 8 && text[0] !== '0') text = '0' + text;
      else if (base === 16) text = '0' + digits[16] + text;
    }
    if (verb === 'O') text = '0o' + text;
    if (negative) text = '-' + text;
    else if (this.plus) text = '+' + text;
    else if (this.space) text = ' ' + text;
    const zero = this.zero;
    this.zero = false;
    this.pad(text);
    this.zero = zero;
  }

  private fmtUnicode(u: bigint): void {
    let prec = 4;
    if (this.precPresent && this.prec > 4) prec = this.prec;
    let text = u.toString(16).toUpperCase();
    if (text.length < prec) text = '0'.repeat(prec - text.length) + text;
    text = 'U+' + text;
    if (this.sharp && u <= 0x10ffffn && isGoPrintable(Number(u))) text += ` '${String.fromCodePoint(Number(u))}'`;
    const zero = this.zero;
    this.zero = false;
    this.pad(text);
    this.zero = zero;
  }

  private fmtFloat(v: number, verb: string, arg: unknown): void {
    switch (verb) {
      case 'v':
        return this.formatFloat(v, 'g', -1);
      case 'b':
      case 'g':
      case 'G':
      case 'x':
      case 'X':
        return this.formatFloat(v, verb, -1);
      case 'f':
      case 'F':
      case 'e':
      case 'E':
        return this.formatFloat(v, verb === 'F' ? 'f' : verb, 6);
      default:
        this.badVerb(verb, arg);
    }
  }

  private formatFloat(v: number, verb: string, prec: number): void {
    if (this.precPresent) prec = this.prec;
    let num = formatFloat(v, verb, prec);
    if (num[0] === '-' || num[0] === '+') {
      // keep the sign
    } else {
      num = '+' + num;
    }
    if (this.space && num[0] === '+' && !this.plus) num = ' ' + num.slice(1);
    if (num[1] === 'I' || num[1] === 'N') {
      const zero = this.zero;
      this.zero = false;
      if (num[1] === 'N' && !this.space && !this.plus) num = num.slice(1);
      this.pad(num);
      this.zero = zero;
      return;
    }
    if (this.sharp && verb !== 'b') {
      let digits = 0;
      if (verb === 'v' || verb === 'g' || verb === 'G' || verb === 'x') {
        digits = prec;
        if (digits === -1) digits = 6;
      }
      let tail = '';
      let body = num;
      let hasDecimalPoint = false;
      let sawNonzeroDigit = false;
      for (let i = 1; i < body.length; i++) {
        const c = body[i]!;
        if (c === '.') {
          hasDecimalPoint = true;
        } else if (c === 'p' || c === 'P' || ((c === 'e' || c === 'E') && verb !== 'x' && verb !== 'X')) {
          tail = body.slice(i);
          body = body.slice(0, i);
          break;
        } else {
          if (c !== '0') sawNonzeroDigit = true;
          if (sawNonzeroDigit) digits--;
        }
      }
      if (!hasDecimalPoint) {
        if (body.length === 2 && body[1] === '0') digits--;
        body += '.';
      }
      while (digits > 0) {
        body += '0';
        digits--;
      }
      num = body + tail;
    }
    if (this.plus || num[0] !== '+') {
      if (this.zero && !this.minus && this.widPresent && this.wid > num.length) {
        this.out += num[0];
        this.writePadding(this.wid - num.length);
        this.out += num.slice(1);
        return;
      }
      this.pad(num);
      return;
    }
    this.pad(num.slice(1));
  }

  private fmtString(v: string, verb: string, arg: unknown): void {
    switch (verb) {
      case 'v':
        if (this.sharpV) this.fmtQ(v);
        else this.fmtS(v);
        return;
      case 's':
        return this.fmtS(v);
      case 'x':
        return this.fmtSx(v, LOWER_HEX);
      case 'X':
        return this.fmtSx(v, UPPER_HEX);
      case 'q':
        return this.fmtQ(v);
      default:
        this.badVerb(verb, arg);
    }
  }

  private truncate(s: string): string {
    if (!this.precPresent) return s;
    let n = this.prec;
    let i = 0;
    for (const ch of s) {
      if (n-- <= 0) return s.slice(0, i);
      i += ch.length;
    }
    return s;
  }

  private fmtS(s: string): void {
    this.pad(this.truncate(s));
  }

  private fmtQ(s: string): void {
    s = this.truncate(s);
    if (this.sharp && canBackquote(s)) {
      this.pad('`' + s + '`');
      return;
    }
    this.pad(quoteGoString(s, this.plus));
  }

  private fmtSx(s: string, digits: string): void {
    const bytes = utf8Bytes(s);
    let length = bytes.length;
    if (this.precPresent && this.prec < length) length = this.prec;
    let width = 2 * length;
    if (width > 0) {
      if (this.space) {
        if (this.sharp) width *= 2;
        width += length - 1;
      } else if (this.sharp) {
        width += 2;
      }
    } else {
      if (this.widPresent) this.writePadding(this.wid);
      return;
    }
    if (this.widPresent && this.wid > width && !this.minus) this.writePadding(this.wid - width);
    let text = '';
    if (this.sharp) text += '0' + digits[16];
    for (let i = 0; i < length; i++) {
      if (this.space && i > 0) {
        text += ' ';
        if (this.sharp) text += '0' + digits[16];
      }
      const c = bytes[i]!;
      text += digits[c >> 4]! + digits[c & 15]!;
    }
    this.out += text;
    if (this.widPresent && this.wid > width && this.minus) this.writePadding(this.wid - width);
  }

  // -------------------------------------------------------------------------------------------
  // Printf

  doPrintf(format: string, args: readonly unknown[]): void {
    const end = format.length;
    let argNum = 0;
    let afterIndex = false;
    let reordered = false;
    let goodArgNum = true;

    const argNumber = (i: number): number => {
      if (i >= end || format[i] !== '[') {
        afterIndex = false;
        return i;
      }
      reordered = true;
      const parsed = parseArgNumber(format, i);
      if (parsed.ok && parsed.index >= 0 && parsed.index < args.length) {
        argNum = parsed.index;
        afterIndex = true;
        return i + parsed.width;
      }
      goodArgNum = false;
      afterIndex = parsed.ok;
      return i + parsed.width;
    };

    const intFromArg = (): { num: number; isInt: boolean } => {
      let num = 0;
      let isInt = false;
      if (argNum < args.length) {
        const a = args[argNum];
        if (a instanceof GoInt) {
          const big = a.value;
          if (big >= -(1n << 63n) && big < 1n << 63n) {
            num = Number(big);
            isInt = true;
          }
        }
        argNum++;
        if (num > 1e6 || num < -1e6) {
          num = 0;
          isInt = false;
        }
      }
      return { num, isInt };
    };

    let i = 0;
    while (i < end) {
      goodArgNum = true;
      const lasti = i;
      while (i < end && format[i] !== '%') i++;
      if (i > lasti) this.out += format.slice(lasti, i);
      if (i >= end) break;
      i++;
      this.clearFlags();
      let simple = false;
      flags: for (; i < end; i++) {
        const c = format[i]!;
        switch (c) {
          case '#':
            this.sharp = true;
            break;
          case '0':
            this.zero = !this.minus;
            break;
          case '+':
            this.plus = true;
            break;
          case '-':
            this.minus = true;
            this.zero = false;
            break;
          case ' ':
            this.space = true;
            break;
          default:
            if (c >= 'a' && c <= 'z' && argNum < args.length) {
              if (c === 'v') {
                this.sharpV = this.sharp;
                this.sharp = false;
                this.plusV = this.plus;
                this.plus = false;
              }
              this.printArg(args[argNum], c);
              argNum++;
              i++;
              simple = true;
            }
            break flags;
        }
      }
      if (simple) continue;

      i = argNumber(i);

      if (i < end && format[i] === '*') {
        i++;
        const w = intFromArg();
        this.wid = w.num;
        this.widPresent = w.isInt;
        if (!this.widPresent) this.out += '%!(BADWIDTH)';
        if (this.wid < 0) {
          this.wid = -this.wid;
          this.minus = true;
          this.zero = false;
        }
        afterIndex = false;
      } else {
        const parsed = parseNum(format, i, end);
        this.wid = parsed.num;
        this.widPresent = parsed.isNum;
        i = parsed.next;
        if (afterIndex && this.widPresent) goodArgNum = false;
      }

      if (i + 1 < end && format[i] === '.') {
        i++;
        if (afterIndex) goodArgNum = false;
        i = argNumber(i);
        if (i < end && format[i] === '*') {
          i++;
          const p = intFromArg();
          this.prec = p.num;
          this.precPresent = p.isInt;
          if (this.prec < 0) {
            this.prec = 0;
            this.precPresent = false;
          }
          if (!p.isInt) this.out += '%!(BADPREC)';
          afterIndex = false;
        } else {
          const parsed = parseNum(format, i, end);
          this.prec = parsed.num;
          this.precPresent = parsed.isNum;
          i = parsed.next;
          if (!this.precPresent) {
            this.prec = 0;
            this.precPresent = true;
          }
        }
      }

      if (!afterIndex) i = argNumber(i);

      if (i >= end) {
        this.out += '%!(NOVERB)';
        break;
      }

      const verb = String.fromCodePoint(format.codePointAt(i)!);
      i += verb.length;

      if (verb === '%') {
        this.out += '%';
      } else if (!goodArgNum) {
        this.out += `%!${verb}(BADINDEX)`;
      } else if (argNum >= args.length) {
        this.out += `%!${verb}(MISSING)`;
      } else {
        if (verb === 'v') {
          this.sharpV = this.sharp;
          this.sharp = false;
          this.plusV = this.plus;
          this.plus = false;
        }
        this.printArg(args[argNum], verb);
        argNum++;
      }
    }

    if (!reordered && argNum < args.length) {
      this.clearFlags();
      this.out += '%!(EXTRA ';
      args.slice(argNum).forEach((arg, k) => {
        if (k > 0) this.out += ', ';
        if (arg === null || arg === undefined) {
          this.out += '<nil>';
        } else {
          this.out += typeName(arg) + '=';
          this.printArg(arg, 'v');
        }
      });
      this.out += ')';
    }
  }
}

function parseNum(s: string, start: number, end: number): { num: number; isNum: boolean; next: number } {
  if (start >= end) return { num: 0, isNum: false, next: end };
  let num = 0;
  let isNum = false;
  let i = start;
  for (; i < end && s[i]! >= '0' && s[i]! <= '9'; i++) {
    if (num > 1e6 || num < -1e6) return { num: 0, isNum: false, next: end };
    num = num * 10 + (s.charCodeAt(i) - 48);
    isNum = true;
  }
  return { num, isNum, next: i };
}

function parseArgNumber(format: string, start: number): { index: number; width: number; ok: boolean } {
  if (format.length - start < 3) return { index: 0, width: 1, ok: false };
  for (let i = start + 1; i < format.length; i++) {
    if (format[i] === ']') {
      const parsed = parseNum(format, start + 1, i);
      if (!parsed.isNum || parsed.next !== i) return { index: 0, width: i - start + 1, ok: false };
      return { index: parsed.num - 1, width: i - start + 1, ok: true };
    }
  }
  return { index: 0, width: 1, ok: false };
}

function runeCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

function asUint64(v: bigint): bigint {
  return BigInt.asUintN(64, v);
}

function validRune(u: bigint): number {
  if (u > 0x10ffffn) return 0xfffd;
  const n = Number(u);
  return n >= 0xd800 && n < 0xe000 ? 0xfffd : n;
}

/** Go's `fmt.Sprint`: operands formatted with `%v`, a space between two non-string operands. */
export function Sprint(...args: unknown[]): string {
  const p = new Printer();
  let prevString = false;
  args.forEach((arg, i) => {
    const isString = typeof arg === 'string';
    if (i > 0 && !isString && !prevString) p.out += ' ';
    p.printArg(arg, 'v');
    prevString = isString;
  });
  return p.out;
}

/** Go's `fmt.Sprintln`: operands formatted with `%v`, space-separated, newline-terminated. */
export function Sprintln(...args: unknown[]): string {
  const p = new Printer();
  args.forEach((arg, i) => {
    if (i > 0) p.out += ' ';
    p.printArg(arg, 'v');
  });
  return p.out + '\n';
}

/** Go's `fmt.Sprintf`. */
export function Sprintf(format: string, ...args: unknown[]): string {
  const p = new Printer();
  p.doPrintf(format, args);
  return p.out;
}

/** `%v` of one value (Go's `fmt.Sprint(v)` for a single operand). */
export function formatValue(value: unknown): string {
  if (typeof value === 'string') return value;
  const p = new Printer();
  p.printArg(value, 'v');
  return p.out;
}
