import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { cleanGoPath, escapeGoPath, unescapeGoPath } from '../../../lib/go/url-path.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

/** Paths as byte strings: one character per byte, slashes and dots common. */
const bytePath = fc
  .array(
    fc.oneof(
      fc.constantFrom('/', '.', '..', '%', 'a', '!', '?', '+'),
      fc.integer({ min: 0, max: 255 }).map((b) => String.fromCharCode(b)),
    ),
    {
      maxLength: 24,
    },
  )
  .map((parts) => parts.join(''));

describe('unescapeGoPath', () => {
  it('decodes every %XX to its byte, either case, and leaves + and other characters alone', () => {
    expect(unescapeGoPath('/%69ngest')).toBe('/ingest');
    expect(unescapeGoPath('/a%2Fb%2fc')).toBe('/a/b/c');
    expect(unescapeGoPath('/%ff%FF')).toBe('/\xff\xff');
    expect(unescapeGoPath('/a+b')).toBe('/a+b');
    expect(unescapeGoPath('/plain')).toBe('/plain');
  });

  it('refuses a % not followed by two hex digits', () => {
    for (const raw of ['/%', '/a%2', '/%zz', '/%g0', '/%%41']) expect(unescapeGoPath(raw)).toBeUndefined();
  });
});

describe('cleanGoPath', () => {
  it('cleans as path.Clean, rooted, keeping a trailing slash as gorilla/mux does', () => {
    const cases: Array<[string, string]> = [
      ['', '/'],
      ['/', '/'],
      ['abc', '/abc'],
      ['//ingest', '/ingest'],
      ['/ingest/', '/ingest/'],
      ['/ingest//', '/ingest/'],
      ['/ingest/.', '/ingest'],
      ['/ingest/./', '/ingest/'],
      ['/a/../ingest', '/ingest'],
      ['/../../ingest', '/ingest'],
      ['/a/b/../../..', '/'],
      ['/a/./b/.././c', '/a/c'],
      ['/..', '/'],
      ['/...', '/...'],
    ];
    for (const [path, cleaned] of cases) expect([path, cleanGoPath(path)]).toEqual([path, cleaned]);
  });

  it('is idempotent and leaves no empty, . or .. element', () => {
    fc.assert(
      fc.property(bytePath, (path) => {
        const cleaned = cleanGoPath(path);
        expect(cleanGoPath(cleaned)).toBe(cleaned);
        expect(cleaned.startsWith('/')).toBe(true);
        const inner = cleaned.slice(1, cleaned.endsWith('/') && cleaned !== '/' ? -1 : undefined).split('/');
        if (cleaned !== '/') for (const element of inner) expect(['', '.', '..']).not.toContain(element);
      }),
      { numRuns },
    );
  });
});

describe('escapeGoPath', () => {
  it('keeps letters, digits and -_.~$&+,/:;=@ and writes every other byte as upper-case %XX', () => {
    expect(escapeGoPath('/a-b_c.d~e$&+,:;=@/')).toBe('/a-b_c.d~e$&+,:;=@/');
    expect(escapeGoPath('/a!b c?d#%')).toBe('/a%21b%20c%3Fd%23%25');
    expect(escapeGoPath('/\xff\x00')).toBe('/%FF%00');
  });

  it('is undone by unescapeGoPath for every byte string', () => {
    fc.assert(
      fc.property(bytePath, (path) => {
        expect(unescapeGoPath(escapeGoPath(path))).toBe(path);
      }),
      { numRuns },
    );
  });
});
