/**
 * Repeated group names. Go's `regexp` lets several groups share a name (`(?P<x>a)|(?P<x>b)`:
 * `SubexpNames` lists it twice), while C++ RE2, re2js and JavaScript reject the pattern. Before a
 * pattern reaches an engine, every repeat of a name gets a unique internal name (`x__1`, …); the
 * names the user wrote are put back in the group-name list and in error messages.
 */

/** A pattern as the engines see it, and the way back to the user's names. */
export interface UniqueGroupNames {
  /** The pattern with every repeated group name after the first replaced by an internal one. */
  readonly pattern: string;
  /** Group names (index 0 = the whole match) with the user's names restored. */
  restoreNames(names: readonly (string | undefined)[]): (string | undefined)[];
  /** An engine's error message about `pattern`, quoting the user's text again. */
  restoreMessage(message: string): string;
}

interface NamedGroup {
  /** Offset of the name's first character. */
  readonly start: number;
  readonly name: string;
}

const UNCHANGED: Omit<UniqueGroupNames, 'pattern'> = {
  restoreNames: (names) => [...names],
  restoreMessage: (message) => message,
};

/**
 * Gives repeated group names unique internal names. A pattern without repeats comes back as it is.
 *
 * @example uniqueGroupNames('(?P<x>a)|(?P<x>b)').pattern // '(?P<x>a)|(?P<x__1>b)'
 */
export function uniqueGroupNames(pattern: string): UniqueGroupNames {
  const groups = namedGroups(pattern);
  const taken = new Set(groups.map((g) => g.name));
  if (taken.size === groups.length) return { pattern, ...UNCHANGED };

  const seen = new Set<string>();
  const original = new Map<string, string>();
  const openers: Array<[internal: string, written: string]> = [];
  let out = '';
  let copied = 0;
  for (const { start, name } of groups) {
    if (!seen.has(name)) {
      seen.add(name);
      continue;
    }
    let n = 1;
    while (taken.has(`${name}__${n}`)) n++;
    const internal = `${name}__${n}`;
    taken.add(internal);
    original.set(internal, name);
    const opener = pattern.slice(pattern.lastIndexOf('(', start), start);
    openers.push([`${opener}${internal}>`, `${opener}${name}>`]);
    out += pattern.slice(copied, start) + internal;
    copied = start + name.length;
  }
  return {
    pattern: out + pattern.slice(copied),
    restoreNames: (names) => names.map((name) => (name === undefined ? undefined : (original.get(name) ?? name))),
    restoreMessage: (message) => openers.reduce((text, [internal, written]) => text.split(internal).join(written), message),
  };
}

/**
 * The `(?P<name>` and `(?<name>` groups of a pattern, in order. Text that cannot open a group is
 * skipped the way RE2 reads it: escapes, `\Q…\E` quotes and character classes (whose first `]`
 * is a literal and whose `[:name:]` runs to the next `:]`).
 */
function namedGroups(pattern: string): NamedGroup[] {
  const groups: NamedGroup[] = [];
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === '\\') {
      if (pattern[i + 1] === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        i = end < 0 ? pattern.length : end + 2;
      } else {
        i += 2;
      }
    } else if (c === '[') {
      i = classEnd(pattern, i);
    } else if (c === '(' && pattern[i + 1] === '?') {
      const prefix = pattern[i + 2] === 'P' && pattern[i + 3] === '<' ? 4 : pattern[i + 2] === '<' ? 3 : 0;
      const close = prefix === 0 ? -1 : pattern.indexOf('>', i + prefix);
      // `(?<=` and `(?<!` are look-behinds (which RE2 rejects), not names.
      const name = close < 0 ? '' : pattern.slice(i + prefix, close);
      if (name !== '' && name[0] !== '=' && name[0] !== '!') groups.push({ start: i + prefix, name });
      i += 2;
    } else {
      i++;
    }
  }
  return groups;
}

/** The offset just past the character class opening at `open` (the pattern's end if it never closes). */
function classEnd(pattern: string, open: number): number {
  let i = open + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === ']') return i + 1;
    if (c === '\\') {
      i += 2;
    } else if (c === '[' && pattern[i + 1] === ':' && pattern.indexOf(':]', i + 2) >= 0) {
      i = pattern.indexOf(':]', i + 2) + 2;
    } else {
      i++;
    }
  }
  return pattern.length;
}
