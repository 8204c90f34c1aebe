/**
 * Parser for RE2 syntax (the `re2` package's dialect, after {@link rewriteJsEscapes}) into a
 * {@link RegexNode} tree. It follows RE2's own parser decision for decision, but it is only ever
 * given patterns the engine has already accepted: it does not report syntax errors, it throws
 * {@link UnexpectedSyntax} when the input is not something it understands.
 */
import type { Assertion, ParsedPattern, RegexNode } from './ast.js';
import { foldAscii, isAscii, PERL_CLASSES, POSIX_CLASSES } from './ascii-classes.js';
import { CodePointSet } from './code-point-set.js';

/** The parser met text RE2 would have rejected; callers treat the pattern as untranslatable. */
export class UnexpectedSyntax extends Error {}

interface Flags {
  /** `(?i)` */
  readonly fold: boolean;
  /** `(?s)` */
  readonly dotNL: boolean;
  /** Not `(?m)`: `^` and `$` match only at the ends of the text. */
  readonly oneLine: boolean;
  /** `(?U)` */
  readonly nonGreedy: boolean;
}

export interface ParseOptions {
  /** Start as if the pattern began with `(?s)`. */
  readonly dotNL?: boolean;
}

const NEWLINE = 0x0a;
const ANY_CHAR = CodePointSet.all;
const ANY_CHAR_BUT_NEWLINE = CodePointSet.all.minus(CodePointSet.of(NEWLINE));
const isOctal = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '7';

/** Parses an RE2 pattern that the engine has accepted. */
export function parseRe2(source: string, options: ParseOptions = {}): ParsedPattern {
  return new Re2Parser(source, options).parse();
}

class Re2Parser {
  private pos = 0;
  private flags: Flags;
  private readonly groupNames: (string | undefined)[] = [undefined];
  private endsInQuote = false;

  constructor(
    private readonly src: string,
    options: ParseOptions,
  ) {
    this.flags = { fold: false, dotNL: options.dotNL ?? false, oneLine: true, nonGreedy: false };
  }

  parse(): ParsedPattern {
    const root = this.parseAlternation();
    if (this.pos < this.src.length) throw new UnexpectedSyntax(`unbalanced ) at ${this.pos}`);
    return {
      root,
      groupNames: this.groupNames,
      numGroups: this.groupNames.length - 1,
      endsInQuote: this.endsInQuote,
    };
  }

  private parseAlternation(): RegexNode {
    const branches = [this.parseConcat()];
    while (this.src[this.pos] === '|') {
      this.pos++;
      branches.push(this.parseConcat());
    }
    return branches.length === 1 ? branches[0]! : { kind: 'alternate', items: branches };
  }

  private parseConcat(): RegexNode {
    const items: RegexNode[] = [];
    while (this.pos < this.src.length) {
      const c = this.src[this.pos]!;
      if (c === '|' || c === ')') break;
      if (c === '*' || c === '+' || c === '?') {
        this.pos++;
        this.repeatLast(items, c === '+' ? 1 : 0, c === '?' ? 1 : Infinity);
        continue;
      }
      if (c === '{') {
        const bounds = this.tryRepeatBounds();
        if (bounds !== null) {
          this.repeatLast(items, bounds[0], bounds[1]);
          continue;
        }
      }
      items.push(...this.parseAtoms());
    }
    if (items.length === 0) return { kind: 'empty' };
    return items.length === 1 ? items[0]! : { kind: 'concat', items };
  }

  /** Applies a repetition to the previous item; flag groups and empty `\Q\E` are transparent to it, as in RE2. */
  private repeatLast(items: RegexNode[], min: number, max: number): void {
    const body = items.pop();
    if (body === undefined) throw new UnexpectedSyntax('repetition without an argument');
    let lazy = false;
    if (this.src[this.pos] === '?') {
      lazy = true;
      this.pos++;
    }
    items.push({ kind: 'repeat', min, max, greedy: lazy === this.flags.nonGreedy, body });
  }

  /** `{n}`, `{n,}` or `{n,m}` at the cursor; anything else leaves `{` as a literal, as RE2 does. */
  private tryRepeatBounds(): [number, number] | null {
    const m = /^\{(0|[1-9][0-9]*)(?:(,)(0|[1-9][0-9]*)?)?\}/.exec(this.src.slice(this.pos, this.pos + 24));
    if (m === null) return null;
    this.pos += m[0].length;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === undefined ? Infinity : Number(m[3]);
    return [min, max];
  }

  /** One atom, or several literals for `\Q…\E`, or none for a flag group like `(?i)`. */
  private parseAtoms(): RegexNode[] {
    const c = this.src[this.pos]!;
    switch (c) {
      case '(':
        return this.parseGroup();
      case '[':
        return [this.parseClass()];
      case '.':
        this.pos++;
        return [{ kind: 'chars', set: this.flags.dotNL ? ANY_CHAR : ANY_CHAR_BUT_NEWLINE }];
      case '^':
        this.pos++;
        return [this.assertion(this.flags.oneLine ? 'beginText' : 'beginLine')];
      case '$':
        this.pos++;
        return [this.assertion(this.flags.oneLine ? 'endText' : 'endLine')];
      case '\\':
        return this.parseEscape();
      default: {
        const cp = this.src.codePointAt(this.pos)!;
        this.pos += cp > 0xffff ? 2 : 1;
        return [this.literal(cp)];
      }
    }
  }

  private assertion(assertion: Assertion): RegexNode {
    return { kind: 'assert', assertion };
  }

  private parseGroup(): RegexNode[] {
    const src = this.src;
    if (src[this.pos + 1] !== '?') {
      this.pos++;
      return [this.parseCapture(undefined)];
    }
    if (src[this.pos + 2] === 'P' || src[this.pos + 2] === '<') {
      const nameStart = this.pos + (src[this.pos + 2] === 'P' ? 4 : 3);
      const nameEnd = src.indexOf('>', nameStart);
      if (nameEnd < 0) throw new UnexpectedSyntax('unterminated group name');
      this.pos = nameEnd + 1;
      return [this.parseCapture(src.slice(nameStart, nameEnd))];
    }
    this.pos += 2;
    let { fold, dotNL, oneLine, nonGreedy } = this.flags;
    let negated = false;
    for (;;) {
      const f = src[this.pos++];
      const on = !negated;
      if (f === 'i') fold = on;
      else if (f === 's') dotNL = on;
      else if (f === 'm') oneLine = !on;
      else if (f === 'U') nonGreedy = on;
      else if (f === '-') negated = true;
      else if (f === ':' || f === ')') {
        const inner: Flags = { fold, dotNL, oneLine, nonGreedy };
        if (f === ')') {
          this.flags = inner;
          return [];
        }
        const outer = this.flags;
        this.flags = inner;
        const body = this.parseAlternation();
        this.expectCloseParen();
        this.flags = outer;
        return [body];
      } else throw new UnexpectedSyntax(`unknown group flag ${f}`);
    }
  }

  private parseCapture(name: string | undefined): RegexNode {
    const index = this.groupNames.length;
    this.groupNames.push(name);
    const outer = this.flags;
    const body = this.parseAlternation();
    this.expectCloseParen();
    this.flags = outer;
    return { kind: 'capture', index, name, body };
  }

  private expectCloseParen(): void {
    if (this.src[this.pos] !== ')') throw new UnexpectedSyntax('missing )');
    this.pos++;
  }

  private parseEscape(): RegexNode[] {
    const start = this.pos;
    const c = this.src[this.pos + 1];
    switch (c) {
      case undefined:
        throw new UnexpectedSyntax('trailing \\');
      case 'b':
      case 'B':
        this.pos += 2;
        return [this.assertion(c === 'b' ? 'wordBoundary' : 'notWordBoundary')];
      case 'A':
        this.pos += 2;
        return [this.assertion('beginText')];
      case 'z':
        this.pos += 2;
        return [this.assertion('endText')];
      case 'C':
        this.pos += 2;
        return [{ kind: 'anyByte' }];
      case 'Q':
        return this.parseQuoted();
      case 'p':
      case 'P':
        this.skipUnicodeClass();
        return [this.engineChars(this.src.slice(start, this.pos))];
      case 'd':
      case 's':
      case 'w':
      case 'D':
      case 'S':
      case 'W':
        this.pos += 2;
        return [{ kind: 'chars', set: this.namedClass(PERL_CLASSES[c.toLowerCase() as 'd' | 's' | 'w'], c >= 'a') }];
      default:
        this.pos++;
        return [this.literal(this.parseRuneEscape())];
    }
  }

  /** `\Q…\E`: every character up to `\E` (or the end) is a literal, each one its own atom. */
  private parseQuoted(): RegexNode[] {
    this.pos += 2;
    const end = this.src.indexOf('\\E', this.pos);
    const text = this.src.slice(this.pos, end < 0 ? undefined : end);
    this.pos = end < 0 ? this.src.length : end + 2;
    if (end < 0) this.endsInQuote = true;
    return [...text].map((ch) => this.literal(ch.codePointAt(0)!));
  }

  /** Moves past `\pL`, `\PL`, `\p{Name}` or `\p{^Name}`. */
  private skipUnicodeClass(): void {
    this.pos += 2;
    if (this.src[this.pos] === '{') {
      const close = this.src.indexOf('}', this.pos);
      if (close < 0) throw new UnexpectedSyntax('unterminated \\p{');
      this.pos = close + 1;
    } else {
      const cp = this.src.codePointAt(this.pos);
      if (cp === undefined) throw new UnexpectedSyntax('missing class name');
      this.pos += cp > 0xffff ? 2 : 1;
    }
  }

  /** An escape standing for one code point; the cursor is just after the backslash. */
  private parseRuneEscape(): number {
    const src = this.src;
    const c = src[this.pos]!;
    if (c >= '1' && c <= '7' && !isOctal(src[this.pos + 1])) throw new UnexpectedSyntax('backreference');
    if (isOctal(c)) {
      let code = 0;
      let digits = 0;
      while (digits < 3 && isOctal(src[this.pos])) {
        code = code * 8 + Number(src[this.pos]);
        this.pos++;
        digits++;
      }
      return code;
    }
    this.pos++;
    switch (c) {
      case 'x': {
        if (src[this.pos] === '{') {
          const close = src.indexOf('}', this.pos);
          const hex = src.slice(this.pos + 1, close);
          if (close < 0 || !/^[0-9A-Fa-f]+$/.test(hex)) throw new UnexpectedSyntax('bad \\x{');
          this.pos = close + 1;
          return parseInt(hex, 16);
        }
        const hex = src.slice(this.pos, this.pos + 2);
        if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new UnexpectedSyntax('bad \\x');
        this.pos += 2;
        return parseInt(hex, 16);
      }
      case 'a':
        return 0x07;
      case 'f':
        return 0x0c;
      case 'n':
        return 0x0a;
      case 'r':
        return 0x0d;
      case 't':
        return 0x09;
      case 'v':
        return 0x0b;
      default: {
        const cp = c.codePointAt(0)!;
        if (cp >= 0x80 || /[0-9A-Za-z]/.test(c)) throw new UnexpectedSyntax(`unknown escape \\${c}`);
        return cp;
      }
    }
  }

  private parseClass(): RegexNode {
    const src = this.src;
    const start = this.pos;
    this.pos++;
    let negated = false;
    if (src[this.pos] === '^') {
      negated = true;
      this.pos++;
    }
    let set = CodePointSet.empty;
    let needsEngine = false;
    let first = true;
    while (this.pos < src.length && (src[this.pos] !== ']' || first)) {
      first = false;
      if (src[this.pos] === '[' && src[this.pos + 1] === ':' && this.pos + 2 < src.length) {
        const close = src.indexOf(':]', this.pos + 2);
        if (close >= 0) {
          const name = src.slice(this.pos + 2, close);
          const positive = !name.startsWith('^');
          const members = POSIX_CLASSES[positive ? name : name.slice(1)];
          if (members === undefined) throw new UnexpectedSyntax(`unknown POSIX class ${name}`);
          set = set.union(this.namedClass(members, positive));
          this.pos = close + 2;
          continue;
        }
      }
      if (src[this.pos] === '\\') {
        const e = src[this.pos + 1];
        if (e === 'p' || e === 'P') {
          this.skipUnicodeClass();
          needsEngine = true;
          continue;
        }
        if (e !== undefined && 'dswDSW'.includes(e)) {
          set = set.union(this.namedClass(PERL_CLASSES[e.toLowerCase() as 'd' | 's' | 'w'], e >= 'a'));
          this.pos += 2;
          continue;
        }
      }
      const lo = this.parseClassChar();
      let hi = lo;
      if (src[this.pos] === '-' && this.pos + 1 < src.length && src[this.pos + 1] !== ']') {
        this.pos++;
        hi = this.parseClassChar();
      }
      if (hi < lo) throw new UnexpectedSyntax('reversed class range');
      const range = CodePointSet.range(lo, hi);
      if (this.flags.fold && !isAscii(range)) needsEngine = true;
      else set = set.union(this.flags.fold ? foldAscii(range) : range);
    }
    if (this.pos >= src.length) throw new UnexpectedSyntax('missing ]');
    this.pos++;
    if (needsEngine) return this.engineChars(src.slice(start, this.pos));
    return { kind: 'chars', set: negated ? set.complement() : set };
  }

  private parseClassChar(): number {
    if (this.src[this.pos] === '\\') {
      this.pos++;
      return this.parseRuneEscape();
    }
    const cp = this.src.codePointAt(this.pos);
    if (cp === undefined) throw new UnexpectedSyntax('missing ]');
    this.pos += cp > 0xffff ? 2 : 1;
    return cp;
  }

  /**
   * A Perl or POSIX class. Under `(?i)` RE2 closes the positive class over case folding first and
   * negates afterwards, so `(?i)\W` excludes KELVIN SIGN too.
   */
  private namedClass(members: CodePointSet, positive: boolean): CodePointSet {
    const closed = this.flags.fold ? foldAscii(members) : members;
    return positive ? closed : closed.complement();
  }

  private literal(cp: number): RegexNode {
    if (!this.flags.fold) return { kind: 'chars', set: CodePointSet.of(cp) };
    if (cp <= 0x7f) return { kind: 'chars', set: foldAscii(CodePointSet.of(cp)) };
    return this.engineChars(`\\x{${cp.toString(16).toUpperCase()}}`);
  }

  private engineChars(classSource: string): RegexNode {
    return { kind: 'engineChars', query: this.flags.fold ? `(?i:${classSource})` : classSource };
  }
}
