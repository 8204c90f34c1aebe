/**
 * stage.json — parses the line (or an extracted value) as a JSON object and stores the results
 * of JMESPath expressions, and of top-level keys matching `regex`, in the extracted map.
 *
 * Reference quirks kept:
 * - JMESPath is the Community Edition dialect (arithmetic, `$`, `let`, `items`, …) with the
 *   reference's Go semantics where they differ from the TypeScript engine: arithmetic on a
 *   non-number gives null instead of an error (so an unquoted `user-agent` silently yields null),
 *   division by zero gives ±Inf/NaN, `{…}` on null is null, fields never resolve to inherited
 *   properties, `to_string` writes Go JSON and `to_number` parses Go floats;
 * - a path that does not exist still creates its key, holding null; objects and arrays are
 *   stored as compact JSON text with `< > &` escaped (keys sorted; the reference leaves their
 *   order unspecified), written the way json-iterator writes numbers (`1e-07`); strings,
 *   numbers and booleans are stored as they are; an evaluation error leaves the key unset;
 * - the input must be a JSON object (a literal `null` counts as an empty one) nested at most
 *   10 001 levels deep (json-iterator's limit); anything else is malformed: dropped with
 *   `drop_malformed` (not counted in any metric), otherwise passed on unchanged;
 * - a `source` that is absent, null or not convertible to text is a no-op, never malformed;
 *   numbers are converted to text first and then fail to parse as an object;
 * - regex keys are written after the expressions and override an expression of the same name;
 * - a compile error reads as the reference's, e.g. `could not compile JMES expression:
 *   SyntaxError: Unexpected token at the end of the expression: tNumber` for `foo-1`.
 */
import { setOwn, sourceText } from '../core/entry.js';
import { ConfigError, FieldError } from '../lib/config/errors.js';
import { compileFieldRegex } from '../core/field-regex.js';
import { compileJmesPath, type JmesPath } from '../lib/jmespath.js';
import { marshalJsoniter, parseJsonObject } from '../lib/go/jsoniter.js';
import { defineStage, type BuildContext, type StageImpl } from '../core/stage.js';
import { PER_ENTRY } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';

export interface JsonConfig {
  /** Extracted name → JMESPath expression; `""` means the name itself. */
  readonly expressions: Readonly<Record<string, string>>;
  /** RE2 pattern over top-level key names; `""` means none. */
  readonly regex: string;
  /** Extracted name to parse instead of the line; unset means the line, `""` is rejected. */
  readonly source?: string;
  readonly drop_malformed: boolean;
}

export const json = defineStage<JsonConfig>({
  name: 'json',
  doc: 'Parses the line or an extracted value as JSON and extracts values with JMESPath expressions.',
  example: `stage.json {
  expressions = { level = "", msg = "message", user = "request.user" }
}`,
  fields: {
    expressions: {
      kind: t.map(t.string),
      default: {},
      doc: 'Extracted name → JMESPath expression. An empty expression means the name itself.',
    },
    regex: { kind: t.string, default: '', doc: 'Top-level keys whose names match (unanchored RE2) are extracted under their own names.' },
    source: { kind: t.string, doc: 'Extracted name to parse. Unset means the line.' },
    drop_malformed: { kind: t.bool, default: false, doc: 'Drops entries whose input is not a JSON object.' },
  },
  validate: validateJson,
  build: buildJson,
  partitioning: () => PER_ENTRY,
});

function validateJson(config: JsonConfig): void {
  if (Object.keys(config.expressions).length === 0 && config.regex === '') {
    throw new ConfigError('JMES expressions or regex is required');
  }
  if (config.source === '') throw new FieldError('source', 'empty source');
  for (const [name, expression] of Object.entries(config.expressions)) compileExpression(name, expression);
  if (config.regex !== '') compileFieldRegex('regex', config.regex);
}

function compileExpression(name: string, expression: string): JmesPath {
  if (typeof expression !== 'string') throw new FieldError('expressions', `expression of ${JSON.stringify(name)} must be a string`);
  try {
    return compileJmesPath(expression === '' ? name : expression);
  } catch (err) {
    throw new FieldError('expressions', `could not compile JMES expression: ${(err as Error).message}`);
  }
}

/** What `storedValue` returns for a result that cannot be stored (it leaves the key unset). */
const UNSTORABLE: unique symbol = Symbol('unstorable');

/**
 * How a JMESPath result is stored: scalars as they are, null as null, the rest as JSON text;
 * UNSTORABLE when it has no JSON text (a sentinel, not a result object, as this runs for every
 * expression of every entry).
 */
function storedValue(result: unknown): unknown {
  if (result === null || result === undefined) return null;
  if (typeof result === 'string' || typeof result === 'number' || typeof result === 'boolean') return result;
  return marshalJsoniter(result) ?? UNSTORABLE;
}

// ---------------------------------------------------------------------------------------------

function buildJson(config: JsonConfig, ctx: BuildContext): StageImpl {
  const expressions = Object.entries(config.expressions).map(([name, expression]) => [name, compileExpression(name, expression)] as const);
  const keyRegex = config.regex === '' ? undefined : compileFieldRegex('regex', config.regex);
  const { source, drop_malformed: dropMalformed } = config;

  return {
    kind: 'map',
    process: (entry) => {
      const { extracted } = entry;
      const input = sourceText(entry, source);
      if (input === undefined) return entry;
      const data = parseJsonObject(input);
      if (data === undefined) {
        ctx.debug('json: input is not a JSON object', { source: source ?? 'line' });
        return dropMalformed ? null : entry;
      }
      for (const [name, expression] of expressions) {
        let result: unknown;
        try {
          result = expression.search(data);
        } catch (err) {
          ctx.debug('json: failed to evaluate JMES expression', { name, error: String(err) });
          continue;
        }
        const stored = storedValue(result);
        if (stored !== UNSTORABLE) setOwn(extracted, name, stored);
      }
      if (keyRegex) {
        for (const key of Object.keys(data)) {
          if (!keyRegex.test(key)) continue;
          const stored = storedValue(data[key]);
          if (stored !== UNSTORABLE) setOwn(extracted, key, stored);
        }
      }
      return entry;
    },
  };
}
