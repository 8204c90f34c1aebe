import { describe, expect, it } from 'vitest';
import { compileFieldRegex } from '../../core/field-regex.js';
import { FieldError } from '../../lib/config/errors.js';

/** The error a pattern gives under `field`. */
function failure(field: string, pattern: string): FieldError {
  try {
    compileFieldRegex(field, pattern);
  } catch (err) {
    if (err instanceof FieldError) return err;
    throw err;
  }
  throw new Error(`${JSON.stringify(pattern)} compiled`);
}

describe('compileFieldRegex', () => {
  // Go's regexp/syntax texts, read off parse.go: the code and the fragment it blames.
  it.each([
    ['(?P<ts[0-9]+).*', 'invalid named capture: `(?P<ts[0-9]+).*`'],
    ['(?<ts[0-9]+).*', 'invalid named capture: `(?<ts[0-9]+).*`'],
    ['(?P<>a)', 'invalid named capture: `(?P<>`'],
    ['((', 'missing closing ): `((`'],
    ['a/(', 'missing closing ): `a/(`'],
    ['a)', 'unexpected ): `a)`'],
    ['[a', 'missing closing ]: `[a`'],
    ['[a-z/', 'missing closing ]: `[a-z/`'],
    ['\\q', 'invalid escape sequence: `\\q`'],
    ['[z-a]', 'invalid character class range: `z-a`'],
    ['[[:foo:]]', 'invalid character class range: `[:foo:]`'],
    ['\\pX', 'invalid character class range: `\\pX`'],
    ['x{2,1}', 'invalid repeat count: `{2,1}`'],
    ['x{1001}', 'invalid repeat count: `{1001}`'],
    ['*', 'missing argument to repetition operator: `*`'],
    ['a**', 'invalid nested repetition operator: `**`'],
    ['(?z)', 'invalid or unsupported Perl syntax: `(?z`'],
    ['(?<', 'invalid or unsupported Perl syntax: `(?<`'],
    ['(?=a)', 'invalid or unsupported Perl syntax: `(?=`'],
    ['a\\', 'trailing backslash at end of expression: ``'],
  ])('words %j the way Go does', (pattern, want) => {
    expect(failure('regex', pattern).reason).toBe(`error parsing regexp: ${want}`);
  });

  it('returns the error as it is under `regex` and prefixes it under any other attribute, as the reference does', () => {
    expect(failure('regex', '((').reason).toBe('error parsing regexp: missing closing ): `((`');
    expect(failure('expression', '((').reason).toBe('could not compile regular expression: error parsing regexp: missing closing ): `((`');
    expect(failure('skip_regex', '((').reason).toBe('could not compile regular expression: error parsing regexp: missing closing ): `((`');
  });

  it('points at the problem in the pattern, also where the engine quotes its rewrite of `/` or `(?<`', () => {
    expect(failure('regex', 'ab((').place.offset).toBe(3);
    expect(failure('regex', 'x[a-z/').place.offset).toBe(1);
    expect(failure('regex', 'x(?<n').place.offset).toBe(1);
    expect(failure('regex', 'a\\').place.offset).toBeUndefined();
  });
});
