/**
 * What every backend shares: Go's iteration rules for `FindAll`, `ReplaceAll` and `Split` on top
 * of one primitive, "the first match at or after an offset".
 */
import { expandTemplate } from './go-expand.js';
import { toWellFormed } from './well-formed.js';
import type { Regex, RegexMatch } from './types.js';

/** Finds the leftmost-first match at or after `from` in one prepared input. */
export type Search = (from: number) => RegexMatch | null;

export interface PatternInfo {
  readonly source: string;
  readonly groupNames: readonly (string | undefined)[];
}

export abstract class RegexBase implements Regex {
  readonly source: string;
  readonly groupNames: readonly (string | undefined)[];
  readonly numGroups: number;
  abstract readonly engine: 'v8' | 're2';

  constructor(info: PatternInfo) {
    this.source = info.source;
    this.groupNames = info.groupNames;
    this.numGroups = info.groupNames.length - 1;
  }

  /** A search over `input`, which is already well-formed UTF-16. */
  protected abstract searchIn(input: string): Search;

  test(input: string): boolean {
    return this.searchIn(toWellFormed(input))(0) !== null;
  }

  exec(input: string): RegexMatch | null {
    return this.searchIn(toWellFormed(input))(0);
  }

  findAll(input: string, limit = -1): RegexMatch[] {
    const text = toWellFormed(input);
    const search = this.searchIn(text);
    const max = limit < 0 ? Infinity : limit;
    const found: RegexMatch[] = [];
    let pos = 0;
    let previousEnd = -1;
    while (found.length < max && pos <= text.length) {
      const m = search(pos);
      if (m === null) break;
      let accept = true;
      if (m.end === pos) {
        // An empty match right after the previous match is not reported.
        if (m.index === previousEnd) accept = false;
        pos += pos < text.length ? codePointWidth(text, pos) : 1;
      } else {
        pos = m.end;
      }
      previousEnd = m.end;
      if (accept) found.push(m);
    }
    return found;
  }

  replaceAll(input: string, replacement: string): string {
    if (!replacement.includes('$')) return this.replaceAllLiteral(input, replacement);
    return this.replaceEach(input, (m) => expandTemplate(replacement, (ref) => this.groupText(m, ref)));
  }

  replaceAllLiteral(input: string, replacement: string): string {
    return this.replaceEach(input, () => replacement);
  }

  split(input: string, limit = -1): string[] {
    if (limit === 0) return [];
    const text = toWellFormed(input);
    if (this.source.length > 0 && text.length === 0) return [''];
    const pieces: string[] = [];
    let begin = 0;
    let end = 0;
    for (const m of this.findAll(text, limit)) {
      if (limit > 0 && pieces.length === limit - 1) break;
      end = m.index;
      if (m.end !== 0) pieces.push(text.slice(begin, end));
      begin = m.end;
    }
    if (end !== text.length) pieces.push(text.slice(begin));
    return pieces;
  }

  /** Go's `replaceAll` loop: a replacement for an empty match right after a match is skipped. */
  private replaceEach(input: string, replacementFor: (m: RegexMatch) => string): string {
    const text = toWellFormed(input);
    const search = this.searchIn(text);
    let out = '';
    let lastMatchEnd = 0;
    let searchPos = 0;
    while (searchPos <= text.length) {
      const m = search(searchPos);
      if (m === null) break;
      out += text.slice(lastMatchEnd, m.index);
      if (m.end > lastMatchEnd || m.index === 0) out += replacementFor(m);
      lastMatchEnd = m.end;
      const width = searchPos < text.length ? codePointWidth(text, searchPos) : 0;
      if (searchPos + width > m.end) searchPos += width;
      else if (searchPos + 1 > m.end) searchPos++;
      else searchPos = m.end;
    }
    return out + text.slice(lastMatchEnd);
  }

  /** Go's `Expand`: a name shared by several groups stands for the first of them that took part. */
  private groupText(m: RegexMatch, ref: string | number): string | undefined {
    if (typeof ref === 'number') return m.groups[ref];
    for (let i = 1; i < this.groupNames.length; i++) {
      if (this.groupNames[i] === ref && m.groups[i] !== undefined) return m.groups[i];
    }
    return undefined;
  }
}

function codePointWidth(text: string, pos: number): number {
  const unit = text.charCodeAt(pos);
  return unit >= 0xd800 && unit <= 0xdbff && pos + 1 < text.length ? 2 : 1;
}
