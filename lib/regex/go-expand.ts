/**
 * Go's `Regexp.Expand` template language, used by `replaceAll`: `$$` is a dollar sign; `$name`
 * and `${name}` insert a group by number or name, where a bare `$name` takes the longest run of
 * letters, digits and underscores (so `$1x` names the group "1x"). An unknown group, a group that
 * did not take part, or a number with a leading zero inserts nothing. A `$` not followed by a
 * valid name stays as it is.
 */

const NAME = /^[\p{L}\p{Nd}_]+/u;

export type GroupLookup = (nameOrNumber: string | number) => string | undefined;

export function expandTemplate(template: string, group: GroupLookup): string {
  let out = '';
  let rest = template;
  for (;;) {
    const dollar = rest.indexOf('$');
    if (dollar < 0) break;
    out += rest.slice(0, dollar);
    rest = rest.slice(dollar + 1);
    if (rest.startsWith('$')) {
      out += '$';
      rest = rest.slice(1);
      continue;
    }
    const ref = parseReference(rest);
    if (ref === null) {
      out += '$';
      continue;
    }
    rest = rest.slice(ref.length);
    out += group(ref.number ?? ref.name) ?? '';
  }
  return out + rest;
}

interface Reference {
  readonly name: string;
  /** Set when the name is a group number: digits only, no leading zero, below 10^8 as Go checks. */
  readonly number: number | undefined;
  /** Characters consumed after the `$`. */
  readonly length: number;
}

function parseReference(text: string): Reference | null {
  const braced = text.startsWith('{');
  const name = NAME.exec(braced ? text.slice(1) : text)?.[0];
  if (name === undefined) return null;
  let length = name.length;
  if (braced) {
    if (text[1 + name.length] !== '}') return null;
    length += 2;
  }
  return { name, number: groupNumber(name), length };
}

function groupNumber(name: string): number | undefined {
  if (!/^[0-9]+$/.test(name)) return undefined;
  if (name.length > 1 && name.startsWith('0')) return undefined;
  let n = 0;
  for (const digit of name) {
    if (n >= 1e8) return undefined;
    n = n * 10 + Number(digit);
  }
  return n;
}
