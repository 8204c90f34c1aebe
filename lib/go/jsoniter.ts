import { firstJsonChar, goJsonQuote, MALFORMED_JSON, tryParseGoJson } from './gojson.js';
import { compareUtf8 } from './gostring.js';

/**
 * JSON decoding and encoding the way json-iterator (the reference's JSON library for stage.json)
 * does it, where it differs from JSON.parse/JSON.stringify.
 */

// json-iterator stops at 10 000 nested containers below the top-level object.
const MAX_NESTING = 10_001;

/** The parsed object, or `undefined` when the text is malformed for the reference. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  // Only an object or a literal null can qualify: a text that starts otherwise (a plain log line)
  // is refused without building JSON.parse's error.
  const first = firstJsonChar(text);
  if (first !== 0x7b /* { */ && first !== 0x6e /* n */) return undefined;
  const doc = tryParseGoJson(text);
  if (doc === MALFORMED_JSON) return undefined;
  if (doc === null) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) return undefined;
  // Every level needs an opening and a closing bracket, so only long texts can be too deep.
  if (text.length > 2 * MAX_NESTING && nestingDepth(text) > MAX_NESTING) return undefined;
  if (overflowed(doc as Record<string, unknown>, text)) return undefined;
  return doc as Record<string, unknown>;
}

/**
 * Whether JSON.parse turned a number out of float64 range into ±Infinity somewhere in `doc`. A
 * flat object (the usual log line) is checked value by value, which costs less than scanning its
 * text; one holding containers is walked only when its text can hold such a number at all.
 */
function overflowed(doc: Record<string, unknown>, text: string): boolean {
  for (const key in doc) {
    if (!Object.hasOwn(doc, key)) continue;
    const value = doc[key];
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return true;
    } else if (value !== null && typeof value === 'object') return mayOverflow(text) && hasNonFinite(doc);
  }
  return false;
}

/** The deepest bracket nesting of valid JSON text (brackets inside strings do not count). */
function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) max = depth;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return max;
}

// A number out of float64 range (1e400, or 400 digits) is a decode error for the reference,
// while JSON.parse turns it into Infinity; only texts with a long exponent or digit run can hold one.
function mayOverflow(text: string): boolean {
  return /[eE][+-]?\d{3}|\d{300}/.test(text);
}

function hasNonFinite(root: unknown): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return true;
    } else if (value !== null && typeof value === 'object') {
      for (const child of Object.values(value)) pending.push(child);
    }
  }
  return false;
}

/**
 * Compact JSON text for an object or array result, as json-iterator's default config writes it:
 * strings HTML-escaped, numbers as Go's shortest `'f'` form or, below 1e-6 and from 1e21 on,
 * `'e'` form with at least two exponent digits. Keys are sorted (the reference's order is
 * unspecified). Iterative, so deeply nested values cannot overflow the stack. `undefined` when
 * a value cannot be encoded (NaN, ±Inf).
 */
export function marshalJsoniter(value: unknown): string | undefined {
  let out = '';
  type Frame = { readonly close: string; readonly items: unknown[]; readonly keys?: string[]; next: number };
  const stack: Frame[] = [];
  const open = (v: unknown): boolean => {
    if (v === null || v === undefined) out += 'null';
    else if (typeof v === 'string') out += goJsonQuote(v, true);
    else if (typeof v === 'boolean') out += v ? 'true' : 'false';
    else if (typeof v === 'number') {
      const text = jsoniterNumber(v);
      if (text === undefined) return false;
      out += text;
    } else if (Array.isArray(v)) {
      out += '[';
      stack.push({ close: ']', items: v, next: 0 });
    } else if (typeof v === 'object') {
      const keys = Object.keys(v).sort(compareUtf8);
      out += '{';
      stack.push({ close: '}', items: keys.map((k) => (v as Record<string, unknown>)[k]), keys, next: 0 });
    } else return false;
    return true;
  };
  if (!open(value)) return undefined;
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if (frame.next === frame.items.length) {
      out += frame.close;
      stack.pop();
      continue;
    }
    const i = frame.next++;
    if (i > 0) out += ',';
    if (frame.keys) out += goJsonQuote(frame.keys[i]!, true) + ':';
    if (!open(frame.items[i])) return undefined;
  }
  return out;
}

function jsoniterNumber(n: number): string | undefined {
  if (!Number.isFinite(n)) return undefined;
  const abs = Math.abs(n);
  if (abs === 0 || (abs >= 1e-6 && abs < 1e21)) return Object.is(n, -0) ? '-0' : String(n);
  const [mantissa, exponent] = n.toExponential().split('e') as [string, string];
  const digits = exponent.slice(1);
  return `${mantissa}e${exponent[0]}${digits.length < 2 ? '0' + digits : digits}`;
}
