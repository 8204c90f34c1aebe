/**
 * The `re2` package does not hand a pattern to RE2 verbatim: it first rewrites a few JavaScript
 * spellings into RE2 ones. Since that package decides what a pattern means, every engine here
 * sees the pattern through the same rewrite:
 *
 * - `\cA`…`\cZ` become `\x01`…`\x1A`;
 * - `\u` followed by hex digits (up to four) becomes `\x{…}`, and `\u{` becomes `\x{`;
 * - long Unicode class names (`\p{Letter}`, `\p{Script=Greek}`, `\p{sc=Greek}`) become RE2 names;
 * - `(?<name>` becomes `(?P<name>` and a bare `/` becomes `\/`;
 * - an empty pattern becomes `(?:)`.
 *
 * The rewrite is a plain left-to-right scan that does not know about `\Q…\E` or brackets, exactly
 * like the package's, so `\Q\u0041\E` means the six characters `\x{0041}`.
 */

const LONG_CLASS_NAMES: Readonly<Record<string, string>> = {
  Uppercase_Letter: 'Lu',
  Lowercase_Letter: 'Ll',
  Titlecase_Letter: 'Lt',
  Cased_Letter: 'LC',
  Modifier_Letter: 'Lm',
  Other_Letter: 'Lo',
  Letter: 'L',
  Nonspacing_Mark: 'Mn',
  Spacing_Mark: 'Mc',
  Enclosing_Mark: 'Me',
  Mark: 'M',
  Decimal_Number: 'Nd',
  Letter_Number: 'Nl',
  Other_Number: 'No',
  Number: 'N',
  Connector_Punctuation: 'Pc',
  Dash_Punctuation: 'Pd',
  Open_Punctuation: 'Ps',
  Close_Punctuation: 'Pe',
  Initial_Punctuation: 'Pi',
  Final_Punctuation: 'Pf',
  Other_Punctuation: 'Po',
  Punctuation: 'P',
  Math_Symbol: 'Sm',
  Currency_Symbol: 'Sc',
  Modifier_Symbol: 'Sk',
  Other_Symbol: 'So',
  Symbol: 'S',
  Space_Separator: 'Zs',
  Line_Separator: 'Zl',
  Paragraph_Separator: 'Zp',
  Separator: 'Z',
  Control: 'Cc',
  Format: 'Cf',
  Surrogate: 'Cs',
  Private_Use: 'Co',
  Unassigned: 'Cn',
  Other: 'C',
};

const isUpperAscii = (c: string | undefined): boolean => c !== undefined && c >= 'A' && c <= 'Z';
const isHexDigit = (c: string | undefined): boolean => c !== undefined && /^[0-9A-Fa-f]$/.test(c);

function shortClassName(name: string): string {
  if (Object.hasOwn(LONG_CLASS_NAMES, name)) return LONG_CLASS_NAMES[name]!;
  if (name.length > 7 && name.startsWith('Script=')) return name.slice(7);
  if (name.length > 3 && name.startsWith('sc=')) return name.slice(3);
  return name;
}

/** The RE2-syntax text the `re2` package compiles for `pattern`. */
export function rewriteJsEscapes(pattern: string): string {
  if (pattern === '') return '(?:)';
  let out = '';
  let i = 0;
  const n = pattern.length;
  while (i < n) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < n) {
      const next = pattern[i + 1]!;
      if (next === 'c' && isUpperAscii(pattern[i + 2])) {
        const code = pattern.charCodeAt(i + 2) - 0x40;
        out += '\\x' + code.toString(16).toUpperCase().padStart(2, '0');
        i += 3;
      } else if (next === 'u' && isHexDigit(pattern[i + 2])) {
        let j = i + 2;
        let digits = '';
        while (j < n && digits.length < 4 && isHexDigit(pattern[j])) digits += pattern[j++];
        out += '\\x{' + digits + '}';
        i = j;
      } else if (next === 'u' && pattern[i + 2] === '{') {
        out += '\\x';
        i += 2;
      } else if ((next === 'p' || next === 'P') && pattern[i + 2] === '{' && pattern.indexOf('}', i + 3) >= 0) {
        const close = pattern.indexOf('}', i + 3);
        const name = shortClassName(pattern.slice(i + 3, close));
        out += '\\' + next + (name.length === 1 ? name : '{' + name + '}');
        i = close + 1;
      } else {
        // Any other escape is copied whole, so its second character is never re-examined.
        const cp = pattern.codePointAt(i + 1)!;
        const width = cp > 0xffff ? 2 : 1;
        out += pattern.slice(i, i + 1 + width);
        i += 1 + width;
      }
    } else if (ch === '/') {
      out += '\\/';
      i += 1;
    } else if (ch === '(' && pattern[i + 1] === '?' && pattern[i + 2] === '<' && pattern[i + 3] !== '=' && pattern[i + 3] !== '!') {
      out += '(?P<';
      i += 3;
    } else {
      out += ch;
      i += 1;
    }
  }
  return out;
}
