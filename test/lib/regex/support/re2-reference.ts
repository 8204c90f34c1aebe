/**
 * Go `regexp` behaviour computed directly on the `re2` package, written independently of
 * lib/regex so the differential tests compare two implementations rather than one with itself.
 */
import RE2 from 're2';

export interface ReferenceMatch {
  readonly index: number;
  readonly end: number;
  readonly groups: readonly (string | undefined)[];
  readonly indices: readonly (readonly [number, number] | undefined)[];
  /** Group values by name, from the package's `groups` object. */
  readonly named: Readonly<Record<string, string | undefined>>;
}

export type ReferenceCompiled = { readonly error: string } | { readonly re: RE2 };

export function referenceCompile(pattern: string): ReferenceCompiled {
  try {
    return { re: new RE2(pattern, 'gdu') };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/**
 * The first match at or after `from` (a code point boundary), with the whole input as context.
 * It runs on UTF-8 bytes and skips empty matches that RE2 finds between the bytes of one
 * character (only `\B` does that), which Go's `regexp`, stepping by character, never reports.
 */
export function referenceSearch(re: RE2, input: string, from: number): ReferenceMatch | null {
  const bytes = Buffer.from(input, 'utf8');
  const utf16 = (byteOffset: number): number => bytes.subarray(0, byteOffset).toString('utf8').length;
  let byteFrom = Buffer.byteLength(input.slice(0, from), 'utf8');
  for (;;) {
    re.lastIndex = byteFrom;
    const m = re.exec(bytes) as unknown as (RegExpExecArray & { indices: RegExpIndicesArray }) | null;
    if (m === null) return null;
    const insideCharacter = m.index < bytes.length && (bytes[m.index]! & 0xc0) === 0x80;
    if (insideCharacter) {
      byteFrom = m.index + 1;
      while (byteFrom < bytes.length && (bytes[byteFrom]! & 0xc0) === 0x80) byteFrom++;
      continue;
    }
    const indices = [...m.indices].map((p) => (p === undefined ? undefined : ([utf16(p[0]), utf16(p[1])] as const)));
    const groups = indices.map((p) => (p === undefined ? undefined : bytes.subarray(...toBytes(p)).toString('utf8')));
    const named: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries((m.groups ?? {}) as unknown as Record<string, Buffer | undefined>))
      named[name] = value?.toString('utf8');
    return { index: indices[0]![0], end: indices[0]![1], groups, indices, named };
  }

  function toBytes([start, end]: readonly [number, number]): [number, number] {
    return [Buffer.byteLength(input.slice(0, start), 'utf8'), Buffer.byteLength(input.slice(0, end), 'utf8')];
  }
}

function runeWidthAt(input: string, pos: number): number {
  if (pos >= input.length) return 0;
  const cp = input.codePointAt(pos)!;
  return cp > 0xffff ? 2 : 1;
}

/** Go's `FindAllStringSubmatchIndex(s, -1)`. */
export function referenceFindAll(re: RE2, input: string): ReferenceMatch[] {
  const out: ReferenceMatch[] = [];
  let pos = 0;
  let prevMatchEnd = -1;
  while (pos <= input.length) {
    const m = referenceSearch(re, input, pos);
    if (m === null) break;
    let accept = true;
    if (m.end === pos) {
      if (m.index === prevMatchEnd) accept = false;
      const width = runeWidthAt(input, pos);
      pos = width > 0 ? pos + width : input.length + 1;
    } else {
      pos = m.end;
    }
    prevMatchEnd = m.end;
    if (accept) out.push(m);
  }
  return out;
}

/** Go's `ReplaceAllString` for a replacement whose only expansion is `$1` (group 1, or empty). */
export function referenceReplaceGroupOne(re: RE2, input: string, before: string, after: string): string {
  let out = '';
  let lastMatchEnd = 0;
  let searchPos = 0;
  while (searchPos <= input.length) {
    const m = referenceSearch(re, input, searchPos);
    if (m === null) break;
    out += input.slice(lastMatchEnd, m.index);
    if (m.end > lastMatchEnd || m.index === 0) out += before + (m.groups[1] ?? '') + after;
    lastMatchEnd = m.end;
    const width = runeWidthAt(input, searchPos);
    if (searchPos + width > m.end) searchPos += width;
    else if (searchPos + 1 > m.end) searchPos++;
    else searchPos = m.end;
  }
  return out + input.slice(lastMatchEnd);
}

/** Go's `Split(s, -1)`. */
export function referenceSplit(re: RE2, pattern: string, input: string): string[] {
  if (pattern.length > 0 && input.length === 0) return [''];
  const pieces: string[] = [];
  let beg = 0;
  let end = 0;
  for (const m of referenceFindAll(re, input)) {
    end = m.index;
    if (m.end !== 0) pieces.push(input.slice(beg, end));
    beg = m.end;
  }
  if (end !== input.length) pieces.push(input.slice(beg));
  return pieces;
}
