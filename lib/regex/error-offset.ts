/**
 * Where in a pattern a syntax error is, from the engine's message (`missing ): (a`, `invalid
 * escape sequence: \q`): the unbalanced parenthesis, or the quoted part when it occurs exactly
 * once in the pattern. Undefined when it cannot be told.
 */
export function regexErrorOffset(pattern: string, message: string): number | undefined {
  if (message.startsWith('missing ): ')) return parenthesisProblem(pattern).unclosed;
  if (message.startsWith('unexpected ): ')) return parenthesisProblem(pattern).unopened;
  const sep = message.indexOf(': ');
  if (sep < 0) return undefined;
  const part = message.slice(sep + 2);
  if (part === '') return undefined;
  const at = pattern.indexOf(part);
  return at >= 0 && pattern.indexOf(part, at + 1) < 0 ? at : undefined;
}

/** The last `(` left open and the first `)` closing nothing, skipping escapes and classes. */
function parenthesisProblem(pattern: string): { unclosed?: number; unopened?: number } {
  const open: number[] = [];
  let unopened: number | undefined;
  let i = 0;
  while (i < pattern.length) {
    const ch = pattern[i]!;
    if (ch === '\\') {
      if (pattern[i + 1] === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        i = end < 0 ? pattern.length : end + 2;
      } else i += 2;
      continue;
    }
    if (ch === '[') {
      i = classEnd(pattern, i);
      continue;
    }
    if (ch === '(') open.push(i);
    else if (ch === ')') {
      if (open.length > 0) open.pop();
      else unopened ??= i;
    }
    i++;
  }
  return { unclosed: open.at(-1), unopened };
}

/** The index just past the character class starting at `start`. */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  while (i < pattern.length) {
    const ch = pattern[i]!;
    if (ch === '\\') i += 2;
    else if (ch === '[' && pattern[i + 1] === ':') {
      const end = pattern.indexOf(':]', i + 2);
      i = end < 0 ? i + 1 : end + 2;
    } else if (ch === ']') return i + 1;
    else i++;
  }
  return i;
}
