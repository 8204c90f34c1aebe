/**
 * The legacy ingest API's `name` syntax, `app{key=value,…}`, shared by the receiver (which reads
 * it) and the writer (which writes it). Read the way the reference's parser reads it, quirks
 * included:
 * - the app name (before the first `{`) is trimmed and must be non-empty with characters from
 *   `[A-Za-z0-9_.\-/]`; it becomes `__name__`;
 * - keys must use `[A-Za-z0-9_.]` (`__name__` itself skips the check and overrides the app name);
 * - a `{…}` segment with no `=` is ignored without error, a pair left open at the end is
 *   dropped, values are trimmed but never checked (`env=` keeps an empty value);
 * - after a pair closed by `}`, reading continues as if inside braces (`a{x=1}y=2}` has y=2).
 * Any violation fails the whole parse.
 */
import { quoteRune } from '../go/gostring.js';

export class LabelSetError extends Error {
  constructor(reason: string, expr?: string) {
    super(expr === undefined ? reason : `${reason}: ${expr}`);
    this.name = 'LabelSetError';
  }
}

function isLabelNameRune(ch: string): boolean {
  const c = ch.charCodeAt(0);
  return ch.length === 1 && ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x2e);
}

function isServiceNameRune(ch: string): boolean {
  return ch === '-' || ch === '/' || isLabelNameRune(ch);
}

/** Rejects a label name the way the reference's validation words it. */
export function validateLabelName(name: string): void {
  if (name.length === 0) throw new LabelSetError('label name is required');
  for (const ch of name) {
    if (!isLabelNameRune(ch))
      throw new LabelSetError('invalid label name', `${name}: character is not allowed: ${quoteRune(ch.codePointAt(0)!)}`);
  }
  if (name === '__name__') throw new LabelSetError('label name is reserved', name);
}

function validateServiceName(name: string): void {
  if (name.length === 0) throw new LabelSetError('service name is required');
  for (const ch of name) {
    if (!isServiceNameRune(ch))
      throw new LabelSetError('invalid service name', `${name}: character is not allowed: ${quoteRune(ch.codePointAt(0)!)}`);
  }
}

type State = 'name' | 'key' | 'value' | 'done';

/**
 * Parses `app{k=v,…}` into its labels (app name under `__name__`), in first-seen order; a key
 * seen twice keeps its last value. Throws LabelSetError.
 *
 * @example parseLabelSet('test.app{env=prod}') // Map { '__name__' => 'test.app', 'env' => 'prod' }
 */
export function parseLabelSet(name: string): Map<string, string> {
  const labels = new Map<string, string>();
  let state: State = 'name';
  let key = '';
  let value = '';
  // A trailing `{` ends the app name when the input has no braces at all.
  for (const ch of name + '{') {
    switch (state) {
      case 'name':
        if (ch === '{') {
          state = 'key';
          const serviceName = value.trim();
          validateServiceName(serviceName);
          labels.set('__name__', serviceName);
        } else {
          value += ch;
        }
        break;
      case 'key':
        if (ch === '}') state = 'done';
        else if (ch === '=') {
          state = 'value';
          value = '';
        } else key += ch;
        break;
      case 'value':
        if (ch === ',' || ch === '}') {
          state = 'key';
          const k = key.trim();
          if (k !== '__name__') validateLabelName(k);
          labels.set(k, value.trim());
          key = '';
        } else {
          value += ch;
        }
        break;
      case 'done':
        break;
    }
  }
  return labels;
}

/**
 * The `name` parameter for a label set, as the reference writes it: the `__name__` value, then
 * every other label as `key=value`, sorted by key, in braces. Values are not escaped.
 *
 * @example formatLabelSet(new Map([['__name__', 'app'], ['env', 'prod']])) // 'app{env=prod}'
 */
export function formatLabelSet(labels: ReadonlyMap<string, string>): string {
  const keys = [...labels.keys()].filter((k) => k !== '__name__').sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `${labels.get('__name__') ?? ''}{${keys.map((k) => `${k}=${labels.get(k)}`).join(',')}}`;
}
