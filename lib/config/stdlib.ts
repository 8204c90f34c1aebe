import { arch, hostname, platform } from 'node:os';
import { ConfigError } from './errors.js';
import { GoJsonError, goJsonMarshal } from '../go/gojson.js';
import { decodeUtf8LikeGo } from '../go/gostring.js';
import { formatFloat } from '../go/strconv.js';
import { packageVersion } from '../package-version.js';
import { type Json, JsonPathError, jsonPath } from './jsonpath.js';
import { goSprintf, type FmtValue } from './sprintf.js';
import {
  ConfigFunction,
  GoFloat,
  getField,
  isFloatKind,
  isNumber,
  makeObject,
  numberValue,
  toConfigValue,
  typeOf,
  valuesEqual,
  type CallContext,
  type Value,
} from './value.js';

/**
 * The standard library of configuration expressions: the namespaces `sys`, `string`, `array`,
 * `encoding`, `convert`, `file`, `constants` (`hostname`, `os`, `arch`, `version`), the top-level
 * `coalesce` and `json_path`, and the reference's
 * deprecated top-level aliases (`env`, `concat`, `json_decode`, `format`, `join`, ...).
 */

type Impl = (args: readonly Value[], ctx: CallContext) => Value;

function fn(name: string, impl: Impl): ConfigFunction {
  return new ConfigFunction(name, impl);
}

function argError(ctx: CallContext, index: number, message: string): ConfigError {
  return new ConfigError(`${ctx.name}: ${message}`, ctx.argPos[index] ?? ctx.pos);
}

function expectArity(args: readonly Value[], ctx: CallContext, count: number): void {
  if (args.length !== count) {
    throw new ConfigError(`${ctx.name} expects ${count} argument${count === 1 ? '' : 's'}, got ${args.length}`, ctx.pos);
  }
}

/** A whole number in decimal (never with an exponent), a float as Go's `FormatFloat(f, 'f', -1)`. */
export function numberToString(v: number | GoFloat): string {
  const n = numberValue(v);
  if (!isFloatKind(v) && Number.isSafeInteger(n)) return String(n);
  if (!isFloatKind(v) && Number.isFinite(n)) return BigInt(n).toString();
  return formatFloat(n, 'f', -1);
}

/** A string argument; numbers convert to their text, as the reference's decoder does. */
function stringArg(args: readonly Value[], index: number, ctx: CallContext): string {
  const v = args[index]!;
  if (typeof v === 'string') return v;
  if (isNumber(v)) return numberToString(v);
  throw argError(ctx, index, `argument ${index + 1} must be a string, got ${typeOf(v)}`);
}

function arrayArg(args: readonly Value[], index: number, ctx: CallContext): readonly Value[] {
  const v = args[index]!;
  if (Array.isArray(v)) return v as readonly Value[];
  throw argError(ctx, index, `argument ${index + 1} must be an array, got ${typeOf(v)}`);
}

function stringFunction(name: string, arity: number, impl: (...strings: string[]) => Value): ConfigFunction {
  return fn(name, (args, ctx) => {
    expectArity(args, ctx, arity);
    return impl(...args.map((_, i) => stringArg(args, i, ctx)));
  });
}

const env = fn('sys.env', (args, ctx) => {
  expectArity(args, ctx, 1);
  return ctx.env(stringArg(args, 0, ctx));
});

const coalesce = fn('coalesce', (args) => {
  if (args.length === 0) return null;
  for (const arg of args) {
    if (!isZeroValue(arg)) return arg;
  }
  return args[args.length - 1]!;
});

/** Go's zero values, with empty arrays and objects also skipped by `coalesce`. */
function isZeroValue(v: Value): boolean {
  switch (typeOf(v)) {
    case 'null':
      return true;
    case 'string':
      return v === '';
    case 'number':
      return numberValue(v as number | GoFloat) === 0;
    case 'bool':
      return v === false;
    case 'array':
      return (v as readonly Value[]).length === 0;
    case 'object':
      return Object.keys(v as object).length === 0;
    default:
      return false;
  }
}

const concat = fn('array.concat', (args, ctx) => {
  const out: Value[] = [];
  args.forEach((_, i) => {
    for (const item of arrayArg(args, i, ctx)) out.push(item);
  });
  return out;
});

const combineMaps = fn('array.combine_maps', (args, ctx) => {
  expectArity(args, ctx, 3);
  const [left, right] = [0, 1].map((i) => {
    const items = arrayArg(args, i, ctx);
    items.forEach((item, k) => {
      if (typeOf(item) !== 'object') throw argError(ctx, i, `element ${k} of argument ${i + 1} must be an object, got ${typeOf(item)}`);
    });
    return items as readonly { readonly [k: string]: Value }[];
  }) as [readonly { readonly [k: string]: Value }[], readonly { readonly [k: string]: Value }[]];
  const conditions = arrayArg(args, 2, ctx);
  if (conditions.length === 0) throw argError(ctx, 2, 'merge conditions must not be empty');
  const keys = conditions.map((c, k) => {
    if (typeof c !== 'string') throw argError(ctx, 2, `merge condition ${k} must be a string, got ${typeOf(c)}`);
    return c;
  });
  const out: Value[] = [];
  for (const l of left) {
    for (const r of right) {
      const joins = keys.every((key) => {
        const a = getField(l, key);
        const b = getField(r, key);
        return a !== undefined && b !== undefined && valuesEqual(a, b);
      });
      if (joins) out.push(makeObject([...Object.entries(l), ...Object.entries(r)]));
    }
  }
  return out;
});

const format = fn('string.format', (args, ctx) => {
  if (args.length === 0) throw new ConfigError(`${ctx.name} expects at least 1 argument, got 0`, ctx.pos);
  const template = stringArg(args, 0, ctx);
  return goSprintf(template, args.slice(1).map(toFmtValue));
});

function toFmtValue(v: Value): FmtValue {
  switch (typeOf(v)) {
    case 'null':
      return { kind: 'nil' };
    case 'string':
      return { kind: 'string', value: v as string };
    case 'bool':
      return { kind: 'bool', value: v as boolean };
    case 'number': {
      const n = v as number | GoFloat;
      return isFloatKind(n) ? { kind: 'float', value: numberValue(n) } : { kind: 'int', value: numberValue(n) };
    }
    case 'array':
      return { kind: 'slice', items: (v as readonly Value[]).map(toFmtValue) };
    case 'object': {
      const obj = v as { readonly [k: string]: Value };
      return { kind: 'map', entries: Object.keys(obj).map((k) => [k, toFmtValue(obj[k]!)] as const) };
    }
    case 'capsule':
      return {
        kind: 'opaque',
        type: `capsule(${(v as { capsule: string }).capsule})`,
        text: `capsule(${(v as { capsule: string }).capsule})`,
      };
    case 'function':
      return { kind: 'opaque', type: 'func', text: (v as ConfigFunction).name };
  }
}

const join = fn('string.join', (args, ctx) => {
  expectArity(args, ctx, 2);
  const items = arrayArg(args, 0, ctx).map((item, k) => {
    if (typeof item === 'string') return item;
    if (isNumber(item)) return numberToString(item);
    throw argError(ctx, 0, `element ${k} of argument 1 must be a string, got ${typeOf(item)}`);
  });
  return items.join(stringArg(args, 1, ctx));
});

/** Go's strings.Split: an empty separator splits between characters. */
function split(s: string, sep: string): string[] {
  if (sep === '') return [...s];
  return s.split(sep);
}

/** Go's strings.ReplaceAll: an empty `old` matches before every character and at the end. */
function replaceAll(s: string, old: string, replacement: string): string {
  if (old === '') return replacement + [...s].map((ch) => ch + replacement).join('');
  return s.split(old).join(replacement);
}

/** Go maps case one character at a time; a character whose mapping is longer stays as it is. */
function mapCase(s: string, upper: boolean): string {
  let out = '';
  for (const ch of s) {
    const mapped = upper ? ch.toUpperCase() : ch.toLowerCase();
    out += [...mapped].length === 1 ? mapped : ch;
  }
  return out;
}

function trimSet(s: string, cutset: string): string {
  const cut = new Set(cutset);
  const chars = [...s];
  let start = 0;
  let end = chars.length;
  while (start < end && cut.has(chars[start]!)) start++;
  while (end > start && cut.has(chars[end - 1]!)) end--;
  return chars.slice(start, end).join('');
}

// Go's unicode.IsSpace (no U+FEFF, unlike JavaScript's trim).
const GO_SPACE =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

const fromJson = fn('encoding.from_json', (args, ctx) => {
  expectArity(args, ctx, 1);
  const text = stringArg(args, 0, ctx);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw argError(ctx, 0, `invalid JSON: ${(err as Error).message}`);
  }
  return fromJsonValue(parsed);
});

/** JSON numbers are float64 in the reference, like every number Go decodes from JSON. */
function fromJsonValue(v: unknown): Value {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return new GoFloat(v);
  if (Array.isArray(v)) return v.map(fromJsonValue);
  return makeObject(Object.entries(v as object).map(([k, item]) => [k, fromJsonValue(item)] as const));
}

const toJson = fn('encoding.to_json', (args, ctx) => {
  expectArity(args, ctx, 1);
  const v = args[0]!;
  if (typeOf(v) !== 'object') throw argError(ctx, 0, `argument 1 must be an object, got ${typeOf(v)}`);
  try {
    return goJsonMarshal(toConfigValue(v, ctx.argPos[0] ?? ctx.pos));
  } catch (err) {
    if (err instanceof GoJsonError) throw argError(ctx, 0, err.message);
    throw err;
  }
});

function base64Decoder(name: string, url: boolean): ConfigFunction {
  return fn(name, (args, ctx) => {
    expectArity(args, ctx, 1);
    const text = stringArg(args, 0, ctx).replace(/[\r\n]/g, '');
    const alphabet = url ? /^[A-Za-z0-9_-]*$/ : /^[A-Za-z0-9+/]*$/;
    const body = text.replace(/={1,2}$/, '');
    const bad = [...body].findIndex((ch) => !alphabet.test(ch));
    if (bad >= 0 || text.length % 4 !== 0) {
      const at = bad >= 0 ? bad : Math.floor(text.length / 4) * 4;
      throw argError(ctx, 0, `illegal base64 data at input byte ${at}`);
    }
    const standard = url ? body.replace(/-/g, '+').replace(/_/g, '/') : body;
    return decodeUtf8LikeGo(Buffer.from(standard, 'base64'));
  });
}

function base64Encoder(name: string, url: boolean): ConfigFunction {
  return stringFunction(name, 1, (s) => {
    const encoded = Buffer.from(s, 'utf8').toString('base64');
    return url ? encoded.replace(/\+/g, '-').replace(/\//g, '_') : encoded;
  });
}

/** Go's path.Clean. */
function cleanPath(path: string): string {
  if (path === '') return '.';
  const rooted = path.startsWith('/');
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length > 0 && parts[parts.length - 1] !== '..') parts.pop();
      else if (!rooted) parts.push('..');
      continue;
    }
    parts.push(part);
  }
  const joined = parts.join('/');
  if (rooted) return '/' + joined;
  return joined === '' ? '.' : joined;
}

const pathJoin = fn('file.path_join', (args, ctx) => {
  const parts = args.map((_, i) => stringArg(args, i, ctx)).filter((p) => p !== '');
  return parts.length === 0 ? '' : cleanPath(parts.join('/'));
});

const nonsensitive = fn('convert.nonsensitive', (args, ctx) => {
  expectArity(args, ctx, 1);
  return stringArg(args, 0, ctx);
});

/**
 * `json_path(json_string, path)`: every value the JSONPath selects in the decoded JSON, as a list
 * (empty when nothing matches). The path language is described in jsonpath.ts.
 */
const jsonPathFn = fn('json_path', (args, ctx) => {
  expectArity(args, ctx, 2);
  const [text, path] = args.map((v, i) => {
    if (typeof v !== 'string') throw argError(ctx, i, `argument ${i + 1} must be a string, got ${typeOf(v)}`);
    return v;
  }) as [string, string];
  let document: Json;
  try {
    document = JSON.parse(text) as Json;
  } catch (err) {
    throw argError(ctx, 0, `invalid JSON: ${(err as Error).message}`);
  }
  try {
    return jsonPath(document, path).map(fromJsonValue);
  } catch (err) {
    if (err instanceof JsonPathError) throw argError(ctx, 1, `invalid JSONPath ${JSON.stringify(path)}: ${err.message}`);
    throw err;
  }
});

function unsupported(name: string): ConfigFunction {
  return fn(name, (_args, ctx) => {
    throw new ConfigError(`${name} is not supported`, ctx.pos);
  });
}

const GO_OS: Readonly<Record<string, string>> = { win32: 'windows', sunos: 'solaris' };
const GO_ARCH: Readonly<Record<string, string>> = { x64: 'amd64', ia32: '386', arm: 'arm', arm64: 'arm64' };

const toLower = stringFunction('string.to_lower', 1, (s) => mapCase(s, false));
const toUpper = stringFunction('string.to_upper', 1, (s) => mapCase(s, true));
const trim = stringFunction('string.trim', 2, trimSet);
const trimPrefix = stringFunction('string.trim_prefix', 2, (s, prefix) => (s.startsWith(prefix) ? s.slice(prefix.length) : s));
const trimSuffix = stringFunction('string.trim_suffix', 2, (s, suffix) =>
  suffix !== '' && s.endsWith(suffix) ? s.slice(0, s.length - suffix.length) : s,
);
const trimSpace = stringFunction('string.trim_space', 1, (s) => s.replace(GO_SPACE, ''));
const splitFn = stringFunction('string.split', 2, split);
const replace = stringFunction('string.replace', 3, replaceAll);
const fromBase64 = base64Decoder('encoding.from_base64', false);

/** The `string` namespace; the reference also keeps each of these as a deprecated top-level name. */
const stringFunctions = {
  format,
  join,
  replace,
  split: splitFn,
  to_lower: toLower,
  to_upper: toUpper,
  trim,
  trim_prefix: trimPrefix,
  trim_suffix: trimSuffix,
  trim_space: trimSpace,
};

function namespace(entries: Record<string, Value>): { readonly [k: string]: Value } {
  return makeObject(Object.entries(entries));
}

/** Identifiers the standard library defines, looked up when the scope does not know a name. */
export const STDLIB: Readonly<Record<string, Value>> = {
  coalesce,
  json_path: jsonPathFn,
  constants: namespace({
    // The reference's form, `v1.2.3`.
    version: packageVersion() === 'unknown' ? 'unknown' : `v${packageVersion()}`,
    hostname: hostname(),
    os: GO_OS[platform()] ?? platform(),
    arch: GO_ARCH[arch()] ?? arch(),
  }),
  sys: namespace({ env }),
  convert: namespace({ nonsensitive }),
  array: namespace({ concat, combine_maps: combineMaps }),
  encoding: namespace({
    from_json: fromJson,
    to_json: toJson,
    from_yaml: unsupported('encoding.from_yaml'),
    from_base64: fromBase64,
    from_URLbase64: base64Decoder('encoding.from_URLbase64', true),
    to_base64: base64Encoder('encoding.to_base64', false),
    to_URLbase64: base64Encoder('encoding.to_URLbase64', true),
  }),
  string: namespace(stringFunctions),
  file: namespace({ path_join: pathJoin }),
  // Deprecated top-level names the reference still accepts.
  env,
  nonsensitive,
  concat,
  json_decode: fromJson,
  yaml_decode: unsupported('yaml_decode'),
  base64_decode: fromBase64,
  ...stringFunctions,
};

export function isStdlibName(name: string): boolean {
  return Object.hasOwn(STDLIB, name);
}
