/**
 * The text form of a label set that the protobuf push carries per stream: `{a="1", b="2"}`.
 * Parsing accepts what the reference's metric parser accepts for stream labels: optional
 * whitespace, a trailing comma, values in double quotes, single quotes or backquotes with Go
 * escapes, and an optional leading metric name that becomes `__name__`. Formatting writes the
 * canonical form: names sorted, values quoted like Go's `strconv.Quote`.
 */
import { GoStringError, quoteGoString, unquoteGoString } from '../go/gostring.js';

/** A label set: label name to value. */
type Labels = Record<string, string>;

/** A label text that does not parse; the message names the problem and its offset. */
export class LabelTextError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LabelTextError';
  }
}

const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;
const METRIC_NAME_CHAR = /[A-Za-z0-9_:]/;

/** Parses `{name="value", …}` into labels; a repeated name keeps its last value. */
export function parseLabelText(text: string): Labels {
  const labels: Labels = {};
  let i = 0;
  const fail = (what: string): never => {
    throw new LabelTextError(`parse error at offset ${i} of ${JSON.stringify(text)}: ${what}`);
  };
  const skipSpace = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  skipSpace();
  if (i < text.length && (NAME_START.test(text[i]!) || text[i] === ':')) {
    const start = i;
    while (i < text.length && METRIC_NAME_CHAR.test(text[i]!)) i++;
    labels.__name__ = text.slice(start, i);
    skipSpace();
    if (i === text.length) return labels;
  }
  if (text[i] !== '{') fail('expected "{"');
  i++;
  skipSpace();
  while (text[i] !== '}') {
    if (i >= text.length) fail('unexpected end of input, expected "}"');
    if (!NAME_START.test(text[i]!)) fail('expected a label name');
    const nameStart = i;
    while (i < text.length && NAME_CHAR.test(text[i]!)) i++;
    const name = text.slice(nameStart, i);
    skipSpace();
    if (text[i] !== '=') fail(`expected "=" after label name ${JSON.stringify(name)}`);
    i++;
    skipSpace();
    labels[name] = readQuoted();
    skipSpace();
    if (text[i] === ',') {
      i++;
      skipSpace();
    } else if (text[i] !== '}') fail('expected "," or "}"');
  }
  i++;
  skipSpace();
  if (i !== text.length) fail('unexpected text after "}"');
  return labels;

  function readQuoted(): string {
    const quote = text[i];
    if (quote !== '"' && quote !== "'" && quote !== '`') return fail('expected a quoted label value');
    const start = i;
    i++;
    while (i < text.length && text[i] !== quote) {
      if (text[i] === '\\' && quote !== '`') i++;
      i++;
    }
    if (i >= text.length) fail('unterminated label value');
    i++;
    const literal = text.slice(start, i);
    try {
      if (quote !== "'") return unquoteGoString(literal);
      // A single-quoted value takes the same escapes; re-quote it as a Go double-quoted literal.
      return unquoteGoString(`"${requoteSingle(literal.slice(1, -1))}"`);
    } catch (err) {
      if (err instanceof GoStringError) return fail(`invalid label value ${literal}: ${err.message}`);
      throw err;
    }
  }
}

/** The body of a single-quoted literal as the body of the equivalent double-quoted one. */
function requoteSingle(body: string): string {
  let out = '';
  for (let k = 0; k < body.length; k++) {
    const ch = body[k]!;
    if (ch === '\\' && k + 1 < body.length) {
      const next = body[++k]!;
      out += next === "'" ? "'" : '\\' + next;
    } else out += ch === '"' ? '\\"' : ch;
  }
  return out;
}

/** `{a="1", b="2"}`: the canonical text of a label set. */
export function formatLabelText(labels: Labels): string {
  const names = Object.keys(labels).sort();
  let out = '{';
  for (let k = 0; k < names.length; k++) {
    const name = names[k]!;
    if (k > 0) out += ', ';
    out += name + '=' + quoteGoString(labels[name]!);
  }
  return out + '}';
}
