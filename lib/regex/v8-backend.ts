/**
 * Runs a translated pattern on V8's RegExp, with the RE2 engine kept for the inputs the
 * translation does not cover: multi-line anchors on text with `\r`, U+2028 or U+2029 (line ends
 * for JavaScript, ordinary characters for RE2), and the rare match that overflows V8's stack.
 */
import type { Re2Program } from './engine.js';
import { type PatternInfo, RegexBase, type Search } from './regex-base.js';
import type { RegexMatch } from './types.js';
import { toWellFormed } from './well-formed.js';

export interface V8Translation {
  /** Source for inputs without surrogates. */
  readonly bmpSource: string;
  /** Source for any well-formed input. */
  readonly fullSource: string;
  /** `'m'` when the pattern uses multi-line anchors, else `''`. */
  readonly flags: '' | 'm';
  /** Inputs with surrogates need the full source (false when both sources behave the same on them). */
  readonly surrogatesNeedFullSource: boolean;
}

/** One translated source compiled for each way it is run. */
class CompiledVariant {
  /** For `test` and `exec` from the start. */
  readonly first: RegExp;
  /** For searches from an offset (`lastIndex`). */
  readonly scan: RegExp;

  constructor(source: string, flags: string) {
    this.first = new RegExp(source, flags);
    this.scan = new RegExp(source, flags + 'g');
  }
}

export class V8Regex extends RegexBase {
  readonly engine = 'v8' as const;
  private readonly bmp: CompiledVariant;
  private full: CompiledVariant | undefined;
  /** Characters that send an input off the fast path; null when no input needs to leave it. */
  private readonly guard: RegExp | null;
  private readonly lineTerminators: RegExp | null;

  constructor(
    info: PatternInfo,
    private readonly translation: V8Translation,
    private readonly re2: () => Re2Program,
  ) {
    super(info);
    this.bmp = new CompiledVariant(translation.bmpSource, translation.flags);
    const multiLine = translation.flags === 'm';
    const guardChars = (multiLine ? '\\r\\u2028\\u2029' : '') + (translation.surrogatesNeedFullSource ? '\\uD800-\\uDFFF' : '');
    this.guard = guardChars === '' ? null : new RegExp(`[${guardChars}]`);
    this.lineTerminators = multiLine ? /[\r\u2028\u2029]/ : null;
  }

  override test(input: string): boolean {
    const text = toWellFormed(input);
    if (this.guard?.test(text)) return this.searchIn(text)(0) !== null;
    try {
      return this.bmp.first.test(text);
    } catch (error) {
      return this.afterV8Failure(error, text, 0) !== null;
    }
  }

  override exec(input: string): RegexMatch | null {
    const text = toWellFormed(input);
    if (this.guard?.test(text)) return this.searchIn(text)(0);
    try {
      const m = this.bmp.first.exec(text);
      return m === null ? null : new V8Match(m, text, this.re2);
    } catch (error) {
      return this.afterV8Failure(error, text, 0);
    }
  }

  protected searchIn(text: string): Search {
    if (this.guard === null || !this.guard.test(text)) return (from) => this.scan(this.bmp, text, from);
    if (this.lineTerminators?.test(text)) return (from) => this.re2().search(text, from);
    const full = (this.full ??= new CompiledVariant(this.translation.fullSource, this.translation.flags));
    return (from) => {
      // JavaScript may find an empty match between the two halves of a surrogate pair; RE2
      // never looks there, so such a match is skipped and the search resumes after the pair.
      for (let at = from; ; ) {
        const m = this.scan(full, text, at);
        if (m === null || !splitsSurrogatePair(text, m.index)) return m;
        at = m.index + 1;
      }
    };
  }

  private scan(variant: CompiledVariant, text: string, from: number): RegexMatch | null {
    try {
      variant.scan.lastIndex = from;
      const m = variant.scan.exec(text);
      return m === null ? null : new V8Match(m, text, this.re2);
    } catch (error) {
      return this.afterV8Failure(error, text, from);
    }
  }

  /** V8 throws a RangeError when a match outgrows its backtracking stack; RE2 has no such limit. */
  private afterV8Failure(error: unknown, text: string, from: number): RegexMatch | null {
    if (!(error instanceof RangeError)) throw error;
    return this.re2().search(text, from);
  }
}

function splitsSurrogatePair(text: string, index: number): boolean {
  const unit = text.charCodeAt(index);
  return index > 0 && unit >= 0xdc00 && unit <= 0xdfff && text.charCodeAt(index - 1) >= 0xd800 && text.charCodeAt(index - 1) <= 0xdbff;
}

/**
 * A match whose group offsets are computed on first use. V8 only reports offsets with the `d`
 * flag, which costs about half the speed and — worse — disqualifies a RegExp from the linear-time
 * fallback. Usually the offsets can be read off the text: a group's text that stands exactly once
 * in the match can only have been captured there. Otherwise RE2, run from the match's start,
 * finds the same match and reports its offsets (a native call that cost stage.replace most of
 * its time when it was made for every match).
 */
class V8Match implements RegexMatch {
  readonly index: number;
  readonly end: number;
  readonly groups: readonly (string | undefined)[];
  #input: string;
  #re2: () => Re2Program;
  #indices: readonly (readonly [number, number] | undefined)[] | undefined;

  constructor(m: RegExpExecArray, input: string, re2: () => Re2Program) {
    this.index = m.index;
    this.end = m.index + m[0].length;
    this.groups = m.slice();
    this.#input = input;
    this.#re2 = re2;
  }

  get indices(): readonly (readonly [number, number] | undefined)[] {
    if (this.#indices === undefined) {
      this.#indices = this.indicesFromText() ?? this.#re2().search(this.#input, this.index)?.indices;
      this.#indices ??= this.groups.map((_, i) => (i === 0 ? ([this.index, this.end] as const) : undefined));
    }
    return this.#indices;
  }

  /**
   * Every group's offsets, when each one's text stands exactly once in the match (an empty text
   * only in an empty match, which has one place); undefined otherwise.
   */
  private indicesFromText(): (readonly [number, number] | undefined)[] | undefined {
    const { index, end, groups } = this;
    const input = this.#input;
    const indices: (readonly [number, number] | undefined)[] = [[index, end]];
    for (let i = 1; i < groups.length; i++) {
      const text = groups[i];
      if (text === undefined) {
        indices.push(undefined);
        continue;
      }
      if (text === '' && index !== end) return undefined;
      const at = input.indexOf(text, index);
      if (at < 0 || at + text.length > end) return undefined;
      const again = input.indexOf(text, at + 1);
      if (again >= 0 && again + text.length <= end) return undefined;
      indices.push([at, at + text.length]);
    }
    return indices;
  }
}
