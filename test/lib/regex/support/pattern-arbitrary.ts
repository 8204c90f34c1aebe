/**
 * fast-check generators of RE2-syntax patterns and of inputs likely to match them. Patterns mix
 * every construct of the syntax, including ones that are invalid in some positions (so syntax
 * errors get compared too) and ones that send a pattern to RE2 instead of V8.
 */
import fc from 'fast-check';

/** Characters inputs are made of; they include case-folding traps (K, ſ, σ/ς/Σ) and line ends. */
export const INPUT_CHARS = [
  'a',
  'b',
  'c',
  'k',
  'K',
  's',
  'S',
  'x',
  'X',
  '0',
  '1',
  '9',
  '_',
  ' ',
  '-',
  '.',
  '=',
  '\n',
  '\r',
  '\t',
  '\v',
  '\u2028',
  'é',
  'É',
  'ſ',
  'K',
  'σ',
  'ς',
  'Σ',
  'ß',
  'ẞ',
  'ǅ',
  '😀',
  '😂',
  '中',
  '\uFFFD',
];

const literal = fc.constantFrom(
  'a',
  'b',
  'c',
  'k',
  'K',
  's',
  'x',
  '0',
  '1',
  '_',
  ' ',
  '-',
  '=',
  'é',
  'ſ',
  'σ',
  '😀',
  '中',
  'ß',
  '\\.',
  '\\n',
  '\\r',
  '\\t',
  '\\x41',
  '\\x{1F600}',
  '\\141',
  '\\-',
  '\\Qa.k\\E',
  '\\Q',
  '\\u0061',
  '\\cJ',
  '/',
  '{',
  '}',
  ']',
);

const charClass = fc.constantFrom(
  '.',
  '\\d',
  '\\D',
  '\\s',
  '\\S',
  '\\w',
  '\\W',
  '\\pL',
  '\\PL',
  '\\pN',
  '\\p{Greek}',
  '\\p{Lu}',
  '\\p{^Greek}',
  '\\p{Letter}',
  '[abc]',
  '[^a-c]',
  '[[:alpha:]]',
  '[[:^digit:]x]',
  '[[:space:]]',
  '[a-zé]',
  '[^\\n]',
  '[\\pN_]',
  '[\\d\\s]',
  '[K-k]',
  '[^k]',
  '[😀-😂]',
  '[^😀]',
  '[]a]',
  '[a-]',
  '[\\x{100}-\\x{17F}]',
  '[σ-ς]',
  '[^\\pL\\s]',
  '[[:word:]-]',
);

const anchor = fc.constantFrom('^', '$', '\\A', '\\z', '\\b', '\\B');
const flagSetting = fc.constantFrom('(?i)', '(?m)', '(?s)', '(?U)', '(?-i)', '(?i-s)', '(?ms)');
const quantifier = fc.oneof(
  { weight: 20, arbitrary: fc.constantFrom('*', '+', '?', '*?', '+?', '??', '{2}', '{1,3}', '{0,2}?', '{2,}', '{0}', '{3,5}') },
  // Counts above 16 are beyond V8's linear-time engine unless unrolled; nested ones make big programs.
  { weight: 1, arbitrary: fc.constantFrom('{17}', '{1,20}') },
);
const groupOpen = fc.constantFrom('(', '(?:', '(?P<N>', '(?<N>', '(?i:', '(?s:', '(?U:', '(?m:', '(?-i:', '(?is:');
/** Invalid in RE2 (or valid only in some positions): syntax errors are compared too. */
const troublemaker = fc.constantFrom('(?=a)', '\\1', '**', '(?P<N>', ')', '[', '\\8', 'x{1001}', '(?<!a)', '\\Z', '\\e');

const { pattern } = fc.letrec<{ pattern: string; branch: string; piece: string; atom: string }>((tie) => ({
  pattern: fc.array(tie('branch'), { minLength: 1, maxLength: 3 }).map((bs) => bs.join('|')),
  branch: fc.array(tie('piece'), { minLength: 0, maxLength: 4 }).map((ps) => ps.join('')),
  piece: fc.oneof(
    { weight: 6, arbitrary: tie('atom') },
    { weight: 3, arbitrary: fc.tuple(tie('atom'), quantifier).map(([a, q]) => a + q) },
    { weight: 1, arbitrary: flagSetting },
    { weight: 1, arbitrary: anchor },
  ),
  atom: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 25, arbitrary: literal },
    { weight: 15, arbitrary: charClass },
    { weight: 10, arbitrary: fc.tuple(groupOpen, tie('pattern')).map(([open, body]) => `${open}${body})`) },
    { weight: 1, arbitrary: troublemaker },
  ),
}));

/** Gives every `<N>` placeholder its own name, so most patterns have no duplicate names. */
function nameGroups(source: string): string {
  let n = 0;
  return source.replace(/<N>/g, () => `<g${++n}>`);
}

export const re2Pattern: fc.Arbitrary<string> = pattern.map(nameGroups);

/** Inputs built mostly from the characters the pattern mentions, so that many of them match. */
export function inputsFor(patternSource: string, count: number): fc.Arbitrary<string[]> {
  const mentioned = [...patternSource].filter((c) => !'()[]{}|*+?^$\\'.includes(c));
  const pool = [...new Set([...mentioned, ...mentioned, ...INPUT_CHARS])];
  const piece = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...(mentioned.length > 0 ? mentioned : INPUT_CHARS)) },
    { weight: 3, arbitrary: fc.constantFrom(...pool) },
    { weight: 1, arbitrary: fc.constantFrom('aaa', 'ab', 'ka', 'a\n', '\r\n', '😀a', 'xx', '\uD800', '\uDC00a') },
  );
  return fc.array(
    fc.array(piece, { maxLength: 12 }).map((ps) => ps.join('')),
    { minLength: count, maxLength: count },
  );
}
