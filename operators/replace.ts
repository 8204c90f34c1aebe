/**
 * stage.replace — rewrites the capture groups of every match of an RE2 expression in the line (or
 * in an extracted value) with a rendered Go template, and stores named groups' replacements.
 *
 * Reference quirks kept:
 * - only capture groups (named or not) are rewritten; the rest of each match stays verbatim, so an
 *   expression without groups changes nothing; every non-overlapping match counts;
 * - each participating group is rendered with `.Value` = its text; a group starting before the end
 *   of the last rewritten group (a nested one) is rendered but not spliced in: the outer one wins;
 * - renderings are remembered by captured text (the last rendering of a text wins), and each named
 *   group of the first match is stored under its name when its text — `""` for a group that did not
 *   take part — has a remembered rendering;
 * - `source = ""` (the default) means the line, unlike stage.regex; a missing or non-stringifiable
 *   source is a no-op; with a source the result is stored there and the line is untouched;
 * - the template data is every extracted value that converts to text (as a Go `map[string]string`)
 *   plus `Value`, with no `Entry`; any execution error makes the whole stage a no-op for the entry.
 *
 * The reference parses `replace` while processing each matching entry; here it is parsed once at
 * build time, so a template that does not parse is a configuration error. Each render has
 * stage.template's execution budget (a render over it is an execution error), the time limit shared
 * by the renders of one entry; execution errors are counted in `logs_process_template_failures_total`
 * and logged at most once per 10 s per stage.
 */
import { own, type Entry } from '../core/entry.js';
import { FieldError } from '../lib/config/errors.js';
import type { Regex, RegexMatch } from '../lib/regex/index.js';
import { compileFieldRegex } from '../core/field-regex.js';
import { defineStage, type BuildContext, type StageImpl } from '../core/stage.js';
import { PER_ENTRY } from '../core/stage-partitioning.js';
import { rateLimitedDebug } from '../core/rate-limited-log.js';
import { templateFailureCounter } from '../core/template-failures.js';
import { t } from '../lib/config/schema.js';
import { hostlessReferenceFuncs, parseTemplate, referenceFuncs, type FuncMap, type Template } from '../lib/template/index.js';
import { mapOf, T_STRING, tagType } from '../lib/template/values.js';
import { stringify } from '../lib/go/values.js';

export interface ReplaceConfig {
  /** RE2 expression whose capture groups are rewritten. */
  readonly expression: string;
  /** Extracted name to rewrite; `""` means the line. */
  readonly source: string;
  /** Go template rendered for each captured group, with `.Value` = the group's text. */
  readonly replace: string;
}

export const replace = defineStage<ReplaceConfig>({
  name: 'replace',
  doc: 'Replaces the capture groups of every match of an RE2 expression in the line or an extracted value with a Go template.',
  example: String.raw`stage.replace {
  expression = "password=(\\S+)"
  replace    = "****"
}`,
  fields: {
    expression: { kind: t.string, required: true, doc: 'RE2 expression; each capture group, named or not, is replaced.' },
    source: { kind: t.string, default: '', doc: 'Extracted name to rewrite; empty means the log line.' },
    replace: { kind: t.string, default: '', doc: 'Go template for the replacement, with `.Value` = the captured text; empty deletes it.' },
  },
  validate: validateReplace,
  build: buildReplace,
  partitioning: () => PER_ENTRY,
});

function validateReplace(config: ReplaceConfig): void {
  compileExpression(config);
  compileReplacement(config);
}

function compileExpression(config: ReplaceConfig): Regex {
  if (config.expression === '') throw new FieldError('expression', 'expression is required');
  return compileFieldRegex('expression', config.expression);
}

/** Parses `replace` as the reference does: named `pipeline_template`, with stage.template's functions. */
function compileReplacement(config: ReplaceConfig, funcs: FuncMap = referenceFuncs): Template {
  try {
    return parseTemplate(config.replace, { name: 'pipeline_template', funcs });
  } catch (err) {
    throw new FieldError('replace', (err as Error).message);
  }
}

const STRING_MAP = mapOf(T_STRING, T_STRING);

/** The rewritten text and, per captured text, its last rendering. */
interface Replaced {
  readonly text: string;
  readonly renderedByCapture: ReadonlyMap<string, string>;
}

function buildReplace(config: ReplaceConfig, ctx: BuildContext): StageImpl {
  const expression = compileExpression(config);
  const replacement = compileReplacement(config, ctx.sandbox ? hostlessReferenceFuncs : referenceFuncs);
  const namedGroups: Array<[index: number, name: string]> = [];
  expression.groupNames.forEach((name, index) => {
    if (index > 0 && name) namedGroups.push([index, name]);
  });
  const { source } = config;
  // A failing template usually fails on every entry: one log line per interval, with the count.
  const templateFailed = rateLimitedDebug(ctx, 'failed to execute template on extracted value');
  const countFailure = templateFailureCounter(ctx.metrics.registry, 'replace');

  return {
    kind: 'map',
    process: (entry) => {
      const input = inputOf(entry, source);
      if (input === undefined) return entry;
      const matches = expression.findAll(input);
      if (matches.length === 0) return entry;
      let replaced: Replaced;
      try {
        replaced = replaceGroups(input, matches, replacement, templateData(entry));
      } catch (err) {
        countFailure(err);
        templateFailed({ error: (err as Error).message });
        return entry;
      }
      if (source === '') entry.line = replaced.text;
      else entry.extracted[source] = replaced.text;
      const first = matches[0]!;
      for (const [index, name] of namedGroups) {
        const rendered = replaced.renderedByCapture.get(first.groups[index] ?? '');
        if (rendered !== undefined) entry.extracted[name] = rendered;
      }
      return entry;
    },
  };
}

function inputOf(entry: Entry, source: string): string | undefined {
  if (source === '') return entry.line;
  return stringify(own(entry.extracted, source));
}

/** Every extracted value that converts to text, as the Go `map[string]string` the reference builds. */
function templateData(entry: Entry): Record<string, unknown> {
  const data: Record<string, unknown> = tagType(Object.create(null) as Record<string, unknown>, STRING_MAP);
  for (const key in entry.extracted) {
    const text = stringify(entry.extracted[key]);
    if (text !== undefined) data[key] = text;
  }
  return data;
}

/** Splices the rendering of each capture group into `input`; throws when a render fails. */
function replaceGroups(input: string, matches: readonly RegexMatch[], replacement: Template, data: Record<string, unknown>): Replaced {
  const renderedByCapture = new Map<string, string>();
  // One time budget for every render of the entry, however many groups it has.
  const since = replacement.now();
  let text = '';
  let replacedUpTo = 0;
  for (const match of matches) {
    for (let group = 1; group < match.indices.length; group++) {
      const span = match.indices[group];
      if (span == null) continue;
      const [start, end] = span;
      const captured = input.slice(start, end);
      data.Value = captured;
      const rendered = replacement.execute(data, { since });
      if (start >= replacedUpTo) {
        text += input.slice(replacedUpTo, start) + rendered;
        replacedUpTo = end;
      }
      renderedByCapture.set(captured, rendered);
    }
  }
  return { text: text + input.slice(replacedUpTo), renderedByCapture };
}
