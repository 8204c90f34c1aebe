/**
 * fast-check arbitraries for log lines in the formats stages meet in production: JSON, logfmt,
 * CRI and Docker container logs, ANSI-coloured text, stack traces, Unicode edge cases and bytes
 * that are not UTF-8 (decoded as Go decodes them, each bad byte becoming U+FFFD).
 */
import fc from 'fast-check';
import { decodeUtf8LikeGo } from '../lib/go/gostring.js';
import { formatRFC3339Nano } from '../lib/time/rfc3339.js';

const LEVELS = ['debug', 'info', 'warn', 'error', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'fatal'] as const;
const WORDS = [
  'request',
  'done',
  'failed',
  'user',
  'id',
  'GET',
  '/api/v1/push',
  'took',
  '12ms',
  'retrying',
  'connection reset',
  'ok',
] as const;

/** A few words of plain ASCII log text. */
export const plainText: fc.Arbitrary<string> = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }).map((w) => w.join(' '));

const anyText: fc.Arbitrary<string> = fc.oneof(
  { withCrossShrink: true },
  { arbitrary: plainText, weight: 3 },
  { arbitrary: fc.string({ maxLength: 16 }), weight: 1 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }), weight: 1 },
);

const rfc3339Nano: fc.Arbitrary<string> = fc
  .bigInt({ min: 946_684_800_000_000_000n, max: 4_102_444_800_000_000_000n })
  .map(formatRFC3339Nano);

/** One JSON object per line, as structured loggers write them, nested values included. */
export function jsonLine(): fc.Arbitrary<string> {
  return fc
    .record(
      {
        level: fc.constantFrom(...LEVELS),
        msg: anyText,
        ts: rfc3339Nano,
        status: fc.integer({ min: 100, max: 599 }),
        duration: fc.double({ min: 0, max: 10, noNaN: true }),
        ok: fc.boolean(),
        user: fc.oneof(fc.constant(null), fc.record({ id: fc.nat(), name: anyText })),
        tags: fc.array(fc.constantFrom(...WORDS), { maxLength: 3 }),
      },
      { requiredKeys: ['msg'] },
    )
    .map((record) => JSON.stringify(record));
}

/** A logfmt value: bare when it can be, quoted (with escapes) when it holds spaces, `=` or quotes. */
const logfmtValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...WORDS, ...LEVELS, '', '3.5', 'true'),
  anyText.map((v) => (/^[^\s="\\]+$/.test(v) ? v : JSON.stringify(v))),
);

/** `key=value` pairs, bare keys and quoted values, as logfmt loggers write them. */
export function logfmtLine(): fc.Arbitrary<string> {
  const key = fc.oneof(
    fc.constantFrom('level', 'msg', 'ts', 'caller', 'err', 'duration', 'user_id'),
    fc.stringMatching(/^[a-z][a-z0-9_.-]{0,7}$/),
  );
  const pair = fc.oneof({ arbitrary: fc.tuple(key, logfmtValue).map(([k, v]) => `${k}=${v}`), weight: 5 }, { arbitrary: key, weight: 1 });
  return fc.array(pair, { minLength: 1, maxLength: 6 }).map((pairs) => pairs.join(' '));
}

/** A CRI container log line: `<RFC 3339 time> <stdout|stderr> <F|P> <content>`. */
export function criLine(options: { readonly content?: fc.Arbitrary<string> } = {}): fc.Arbitrary<string> {
  return fc
    .tuple(
      rfc3339Nano,
      fc.constantFrom('stdout', 'stderr'),
      fc.constantFrom('F', 'F', 'P'),
      options.content ?? fc.oneof(plainText, jsonLine()),
    )
    .map(([time, stream, flag, content]) => `${time} ${stream} ${flag} ${content}`);
}

/** A Docker json-file log line: `{"log":"…\n","stream":"stdout","time":"…"}`. */
export function dockerLine(options: { readonly content?: fc.Arbitrary<string> } = {}): fc.Arbitrary<string> {
  return fc
    .tuple(options.content ?? fc.oneof(plainText, jsonLine()), fc.constantFrom('stdout', 'stderr'), rfc3339Nano, fc.boolean())
    .map(([log, stream, time, newline]) => JSON.stringify({ log: newline ? log + '\n' : log, stream, time }));
}

const ESC = '\u001b';
const sgr: fc.Arbitrary<string> = fc
  .array(fc.constantFrom('0', '1', '2', '4', '31', '32', '33', '34', '38;5;208', '48;2;10;20;30', '39', ''), { minLength: 1, maxLength: 3 })
  .map((params) => `${ESC}[${params.join(';')}m`);
const otherEscape: fc.Arbitrary<string> = fc.constantFrom(`${ESC}[2K`, `${ESC}[1A`, `${ESC}[?25l`, `${ESC}]0;title\u0007`, '\u009b31m');

/** Text with ANSI colour (SGR) codes and a few other terminal escapes around its words. */
export function ansiLine(): fc.Arbitrary<string> {
  const piece = fc.oneof({ arbitrary: plainText, weight: 3 }, { arbitrary: sgr, weight: 2 }, { arbitrary: otherEscape, weight: 1 });
  return fc.array(piece, { minLength: 1, maxLength: 6 }).map((pieces) => pieces.join(''));
}

const javaFrame = fc
  .tuple(
    fc.constantFrom('com.example.api', 'org.app.db', 'io.netty.channel'),
    fc.constantFrom('Handler', 'Pool', 'Worker'),
    fc.constantFrom('run', 'handle', 'query'),
    fc.nat(999),
  )
  .map(([pkg, cls, method, line]) => `\tat ${pkg}.${cls}.${method}(${cls}.java:${line})`);
const goFrame = fc
  .tuple(fc.constantFrom('main', 'net/http', 'github.com/org/app/db'), fc.constantFrom('serve', 'Query', 'run'), fc.nat(999))
  .map(([pkg, fn, line]) => `${pkg}.${fn}(...)\n\t/src/${pkg}/${fn}.go:${line} +0x1d`);
const pythonFrame = fc
  .tuple(fc.constantFrom('app.py', 'db/pool.py', 'worker.py'), fc.nat(999), fc.constantFrom('main', 'query', 'handle'))
  .map(([file, line, fn]) => `  File "/srv/${file}", line ${line}, in ${fn}`);

/**
 * The lines of one stack trace (Java, Go or Python), first line first: the shape multiline
 * stages must put back together.
 */
export function stackTraceLines(): fc.Arbitrary<string[]> {
  const frames = (frame: fc.Arbitrary<string>) => fc.array(frame, { minLength: 1, maxLength: 4 });
  return fc.oneof(
    frames(javaFrame).map((f) => ['Exception in thread "main" java.lang.IllegalStateException: boom', ...f, '\t... 3 more']),
    frames(goFrame).map((f) => [
      'panic: runtime error: index out of range [3] with length 3',
      '',
      'goroutine 1 [running]:',
      ...f.flatMap((x) => x.split('\n')),
    ]),
    frames(pythonFrame).map((f) => ['Traceback (most recent call last):', ...f, 'ValueError: invalid literal']),
  );
}

/** A whole stack trace in one line of text, its lines joined with `\n`. */
export function stackTrace(): fc.Arbitrary<string> {
  return stackTraceLines().map((lines) => lines.join('\n'));
}

const EDGE_CHARACTERS = [
  // Controls, separators, invisible and bidi characters, BOM, the replacement character.
  '\u0000',
  '\t',
  '\r',
  '\n',
  '\r\n',
  '\u00a0',
  '\u00ad',
  '\u200b',
  '\u200d',
  '\u2028',
  '\u2029',
  '\u202e',
  '\ufeff',
  '\ufffd',
  '\uffff',
  // Combining marks, case-folding traps (long s, Kelvin sign, dotted I), ligatures, digits of other scripts.
  'é',
  'e\u0301',
  'ß',
  '\u017f',
  '\u212a',
  '\u0130',
  'ﬀ',
  'Ⅻ',
  '٣',
  '𝟘',
  'א',
  '中',
  // Astral characters, ZWJ sequences, flags, skin-tone modifiers, the last code point.
  '😀',
  '👩\u200d👩\u200d👧',
  '🇫🇷',
  '\u{1f3fb}',
  '\u{10ffff}',
] as const;

/**
 * Text made of Unicode edge cases: NUL and control characters, line and paragraph separators,
 * zero-width and bidi controls, BOM, U+FFFD, combining marks, case-folding traps (`ſ`, `K`, `İ`),
 * astral characters, ZWJ emoji sequences and flags.
 */
export function unicodeText(): fc.Arbitrary<string> {
  return fc.array(fc.oneof(fc.constantFrom(...EDGE_CHARACTERS), plainText), { minLength: 1, maxLength: 8 }).map((parts) => parts.join(''));
}

/**
 * Bytes that are not valid UTF-8 (stray continuation bytes, overlong forms, encoded surrogates,
 * truncated sequences) among valid text, decoded the way Go decodes them: each bad byte becomes
 * U+FFFD, as a line read from a file or a socket arrives.
 */
export function invalidUtf8Line(): fc.Arbitrary<string> {
  const bad = fc.constantFrom(
    [0x80],
    [0xbf],
    [0xc0, 0xaf],
    [0xed, 0xa0, 0x80],
    [0xf4, 0x90, 0x80, 0x80],
    [0xe2, 0x82],
    [0xff],
    [0xfe, 0xfe],
  );
  const good = plainText.map((text) => [...new TextEncoder().encode(text)]);
  // A space after each bad sequence keeps two of them from joining into a valid character
  // (`E2 82` then `80` is `₀`); the final 0xFF is never valid anywhere.
  const separated = bad.map((bytes) => [...bytes, 0x20]);
  return fc.array(fc.oneof(good, separated), { maxLength: 4 }).map((parts) => decodeUtf8LikeGo([...parts.flat(), 0xff]));
}

/**
 * Any log line: plain text or one of the formats above, in proportions that keep every kind
 * frequent in a few dozen runs.
 */
export function logLine(): fc.Arbitrary<string> {
  // Cross-shrinking lets a counterexample of any format shrink to the plainest line there is.
  return fc.oneof(
    { withCrossShrink: true },
    { arbitrary: plainText, weight: 3 },
    { arbitrary: jsonLine(), weight: 2 },
    { arbitrary: logfmtLine(), weight: 2 },
    { arbitrary: criLine(), weight: 1 },
    { arbitrary: dockerLine(), weight: 1 },
    { arbitrary: ansiLine(), weight: 1 },
    { arbitrary: stackTrace(), weight: 1 },
    { arbitrary: unicodeText(), weight: 1 },
    { arbitrary: invalidUtf8Line(), weight: 1 },
    { arbitrary: fc.string({ maxLength: 20 }), weight: 1 },
  );
}
