import { TYPE_NUMBER, TYPE_STRING, type register } from '@jmespath-community/jmespath';
import { goReplace, goSplitN, goToLower, goToUpper, goTrim, goTrimLeft, goTrimRight, isGoSpace } from './template/funcs/gostrings.js';

/** An argument list's types as the engine checks them before a call (its `InputSignature[]`). */
export type JmesSignature = Parameters<typeof register>[2];

/** A function in the engine's calling convention: its signature, and its body on checked arguments. */
export interface JmesFunction {
  readonly signature: JmesSignature;
  readonly call: (args: unknown[]) => unknown;
}

const STRING = { types: [TYPE_STRING] };
const NUMBER = { types: [TYPE_NUMBER] };
const optional = (argument: { types: JmesSignature[number]['types'] }) => ({ ...argument, optional: true });

/**
 * The Community Edition's string functions as the reference's go-jmespath computes them, where
 * the TypeScript engine's differ: Go strings are UTF-8 bytes, so `find_first`/`find_last` give
 * byte offsets and `pad_left`/`pad_right` count widths (and the one-character pad) in bytes;
 * `upper`/`lower` map rune by rune (`ß` stays `ß`, no final sigma); `trim` without characters
 * trims Go's white space (U+0085 yes, U+FEFF no); `split` with an empty separator splits runes,
 * not UTF-16 halves. Each has the signature of the engine's function of the same name, so the
 * engine checks the arguments before the body sees them.
 */
export const goStringFunctions: Readonly<Record<string, JmesFunction>> = {
  upper: { signature: [STRING], call: ([s]) => goToUpper(s as string) },
  lower: { signature: [STRING], call: ([s]) => goToLower(s as string) },
  find_first: {
    signature: [STRING, STRING, optional(NUMBER), optional(NUMBER)],
    call: (args) => find('find_first', args, (haystack, needle) => haystack.indexOf(needle)),
  },
  find_last: {
    signature: [STRING, STRING, optional(NUMBER), optional(NUMBER)],
    call: (args) => find('find_last', args, (haystack, needle) => haystack.lastIndexOf(needle)),
  },
  pad_left: { signature: [STRING, NUMBER, optional(STRING)], call: (args) => pad('pad_left', args, (s, padding) => padding + s) },
  pad_right: { signature: [STRING, NUMBER, optional(STRING)], call: (args) => pad('pad_right', args, (s, padding) => s + padding) },
  trim: {
    signature: [STRING, optional(STRING)],
    call: ([s, cutset]) => (cutset ? goTrim(s as string, cutset as string) : trimSpace(s as string, true, true)),
  },
  trim_left: {
    signature: [STRING, optional(STRING)],
    call: ([s, cutset]) => (cutset ? goTrimLeft(s as string, cutset as string) : trimSpace(s as string, true, false)),
  },
  trim_right: {
    signature: [STRING, optional(STRING)],
    call: ([s, cutset]) => (cutset ? goTrimRight(s as string, cutset as string) : trimSpace(s as string, false, true)),
  },
  split: { signature: [STRING, STRING, optional(NUMBER)], call: (args) => split(args) },
  replace: {
    signature: [STRING, STRING, STRING, optional(NUMBER)],
    call: (args) => {
      const [subject, old, replacement] = args as string[];
      const count = args.length > 3 ? positiveInteger(args[3], 'replace', 'count') : -1;
      return goReplace(subject!, old!, replacement!, count);
    },
  },
};

/** A number that is a whole number, as go-jmespath's `util.ToInteger` accepts it. */
function integer(value: unknown, name: string, argument: string): number {
  if (typeof value !== 'number' || Math.floor(value) !== value) {
    throw new Error(`invalid value, the function '${name}' expects its '${argument}' argument to be an integer`);
  }
  return value;
}

function positiveInteger(value: unknown, name: string, argument: string): number {
  const n = typeof value === 'number' && Math.floor(value) === value ? value : -1;
  if (n < 0) throw new Error(`invalid value, the function '${name}' expects its '${argument}' argument to be a non-negative integer`);
  return n;
}

/** `find_first`/`find_last`: the byte offset of `needle` in `subject[start:end]` (bytes), plus `start`. */
function find(name: string, args: unknown[], indexIn: (haystack: Buffer, needle: Buffer) => number): number | null {
  const subject = Buffer.from(args[0] as string);
  const needle = Buffer.from(args[1] as string);
  if (subject.length === 0 || needle.length === 0) return null;
  const start = args.length > 2 ? Math.max(0, integer(args[2], name, 'start')) : 0;
  const end = args.length > 3 ? Math.min(integer(args[3], name, 'end'), subject.length) : subject.length;
  // Go slices subject[start:end] and panics when the bounds cross; an error keeps the key unset.
  if (start > end) throw new Error(`slice bounds out of range [${start}:${end}]`);
  const offset = indexIn(subject.subarray(start, end), needle);
  return offset === -1 ? null : start + offset;
}

/** `pad_left`/`pad_right`: up to `width` bytes with a pad of at most one byte (a space by default). */
function pad(name: string, args: unknown[], join: (s: string, padding: string) => string): string {
  const s = args[0] as string;
  const width = positiveInteger(args[1], name, 'width');
  const padding = args.length > 2 ? (args[2] as string) : ' ';
  if (Buffer.byteLength(padding) > 1) {
    throw new Error(`invalid value, the function '${name}' expects its 'pad' argument to be a string of length 1`);
  }
  return join(s, padding.repeat(Math.max(0, width - Buffer.byteLength(s))));
}

/** Go's `strings.TrimFunc(s, unicode.IsSpace)` on one side or both (every Go space is one UTF-16 unit). */
function trimSpace(s: string, left: boolean, right: boolean): string {
  let start = 0;
  let end = s.length;
  if (left) while (start < end && isGoSpace(s.charCodeAt(start))) start++;
  if (right) while (end > start && isGoSpace(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end);
}

/** `split(subject, separator, count?)`: count n gives at most n + 1 parts; 0 gives the subject whole. */
function split(args: unknown[]): string[] {
  const s = args[0] as string;
  if (s.length === 0) return [];
  if (args.length <= 2) return goSplitN(s, args[1] as string, -1);
  const n = positiveInteger(args[2], 'split', 'count');
  return n === 0 ? [s] : goSplitN(s, args[1] as string, n + 1);
}
