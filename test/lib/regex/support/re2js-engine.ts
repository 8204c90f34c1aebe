/**
 * The regex pipeline on a second engine: {@link Re2Engine} over `re2js`, a pure JavaScript port of
 * RE2, with error texts put in the `re2` package's words. Running the same patterns through both
 * engines shows that translation, group names and error wording depend on RE2's semantics and not
 * on the native package (the pipeline takes its engine as a parameter for that reason).
 */
import { RE2JS, RE2JSSyntaxException } from 're2js';
import { compileWith } from '../../../../lib/regex/compile.js';
import type { Re2Engine, Re2Program } from '../../../../lib/regex/engine.js';
import { rewriteJsEscapes } from '../../../../lib/regex/js-escapes.js';
import { type CompileOptions, type Regex, type RegexMatch, RegexSyntaxError } from '../../../../lib/regex/types.js';

/**
 * re2js reports errors in Go's words; these are the `re2` package's (C++ RE2) words for the same
 * error codes, so both engines report an error the same way.
 */
const CPP_WORDING: Readonly<Record<string, string>> = {
  'invalid or unsupported Perl syntax': 'invalid perl operator',
  'invalid nested repetition operator': 'bad repetition operator',
  'invalid repeat count': 'invalid repetition size',
  'missing closing ]': 'missing ]',
  'missing closing )': 'missing )',
  'missing argument to repetition operator': 'no argument for repetition operator',
  'trailing backslash at end of expression': 'trailing \\',
  'invalid named capture': 'invalid named capture group',
};

function inCppWords(code: string, input: string | null): string {
  // RE2 reads a lookbehind as a Perl operator it lacks; re2js as a malformed group name.
  const lookbehind = input === null ? null : /^\(\?<[=!]/.exec(input);
  if (code === 'invalid named capture' && lookbehind !== null) return `invalid perl operator: ${lookbehind[0]}`;
  const words = CPP_WORDING[code] ?? code;
  // The re2 package reports a duplicate group name without naming it.
  if (!input || code === 'duplicate capture group name') return words;
  return `${words}: ${input}`;
}

/** C++ RE2 quotes a bad counted repetition with its lazy `?` (`{1001}?`); Go stops before it. */
function withLazyMark(code: string, input: string | null, pattern: string): string | null {
  if (code !== 'invalid repeat count' || input === null) return input;
  const at = pattern.indexOf(input);
  return at >= 0 && pattern[at + input.length] === '?' ? `${input}?` : input;
}

export const re2jsEngine: Re2Engine = {
  compile(pattern: string): Re2Program {
    let re: RE2JS;
    try {
      // The `re2` package rewrites some JavaScript escapes before RE2 sees them; do the same.
      re = RE2JS.compile(rewriteJsEscapes(pattern));
    } catch (error) {
      if (error instanceof RE2JSSyntaxException) {
        throw new RegexSyntaxError(inCppWords(error.error, withLazyMark(error.error, error.input, pattern)));
      }
      throw new RegexSyntaxError((error as Error).message);
    }
    const numGroups = re.groupCount();
    return {
      search(input: string, from: number): RegexMatch | null {
        const m = re.matcher(input);
        if (!m.find(from)) return null;
        const groups: (string | undefined)[] = [];
        const indices: (readonly [number, number] | undefined)[] = [];
        for (let i = 0; i <= numGroups; i++) {
          const start = m.start(i);
          groups.push(start < 0 ? undefined : input.slice(start, m.end(i)));
          indices.push(start < 0 ? undefined : [start, m.end(i)]);
        }
        return { index: m.start(0), end: m.end(0), groups, indices };
      },
    };
  },
};

/** Compiles an RE2 pattern like `compileRegex` of lib/regex/index.ts, but on re2js. */
export function compileOnRe2js(pattern: string, options?: CompileOptions): Regex {
  return compileWith(re2jsEngine, null, pattern, options);
}
