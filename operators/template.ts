/**
 * stage.template — renders a Go `text/template` (with sprig and the reference's own functions)
 * and stores the result in the extracted map under `source`.
 *
 * Reference quirks kept:
 * - the data is a map of every extracted value that converts to text, as a string (null and lists
 *   are left out of the data but stay in the extracted map), plus `Value` (the source's text, only
 *   when the source exists and converts) and `Entry` (the line);
 * - a missing key prints as `<no value>`; passing one to a string function is an execution error;
 * - an execution error leaves the entry unchanged; an empty render deletes the source key;
 * - the template is parsed once, when the stage is built, with the whole function map, so syntax
 *   errors and unknown function names are configuration errors carrying the engine's message.
 *
 * The reference fills its data from an unordered map, so an extracted key literally named `Value`
 * collides with the source's value unpredictably; here the source's value always wins. Unlike the
 * reference, each render has an execution budget (lib/template/budget.ts: steps, sizes, 1 s of wall
 * time): a render over it is an execution error like any other. Execution errors are counted in
 * `logs_process_template_failures_total` by reason and logged at most once per 10 s per stage.
 */
import { own } from '../core/entry.js';
import { FieldError } from '../lib/config/errors.js';
import { defineStage, type BuildContext, type StageImpl } from '../core/stage.js';
import { PER_ENTRY } from '../core/stage-partitioning.js';
import { rateLimitedDebug } from '../core/rate-limited-log.js';
import { templateFailureCounter } from '../core/template-failures.js';
import { t } from '../lib/config/schema.js';
import { hostlessReferenceFuncs, parseTemplate, referenceFuncs, type FuncMap, type Template } from '../lib/template/index.js';
import { stringify } from '../lib/go/values.js';

export interface TemplateConfig {
  /** Extracted name read as `.Value` and written with the result. */
  readonly source: string;
  /** Go template text. */
  readonly template: string;
}

export const template = defineStage<TemplateConfig>({
  name: 'template',
  doc: 'Renders a Go template (with sprig functions) and stores the result as an extracted value; an empty result deletes it.',
  example: `stage.json {
  expressions = { level = "" }
}

stage.template {
  source   = "level"
  template = "{{ .level | ToUpper }}"
}`,
  fields: {
    source: { kind: t.string, required: true, doc: 'Extracted name to write; its current value is `.Value`. Created if absent.' },
    template: { kind: t.string, required: true, doc: 'Go template; `.Value`, `.Entry` (the line) and `.<extracted name>` are available.' },
  },
  validate: validateTemplate,
  build: buildTemplate,
  partitioning: () => PER_ENTRY,
});

function validateTemplate(config: TemplateConfig): void {
  compileStageTemplate(config);
}

/**
 * Parses the template as the reference does: named `pipeline_template` (the name shows in error
 * messages), with Go's built-ins, sprig and the reference's custom functions (in a sandbox, their
 * forms without environment variables and name resolution).
 */
function compileStageTemplate(config: TemplateConfig, funcs: FuncMap = referenceFuncs): Template {
  if (config.source === '') throw new FieldError('source', 'template source value is required');
  try {
    return parseTemplate(config.template, { name: 'pipeline_template', funcs });
  } catch (err) {
    throw new FieldError('template', (err as Error).message);
  }
}

function buildTemplate(config: TemplateConfig, ctx: BuildContext): StageImpl {
  const compiled = compileStageTemplate(config, ctx.sandbox ? hostlessReferenceFuncs : referenceFuncs);
  const { source } = config;
  // A failing template usually fails on every entry: one log line per interval, with the count.
  const templateFailed = rateLimitedDebug(ctx, 'failed to execute template on extracted value');
  const countFailure = templateFailureCounter(ctx.metrics.registry, 'template');
  return {
    kind: 'map',
    process: (entry) => {
      const { extracted } = entry;
      const data: Record<string, unknown> = Object.create(null);
      for (const key in extracted) {
        const text = stringify(extracted[key]);
        if (text !== undefined) data[key] = text;
      }
      const value = stringify(own(extracted, source));
      if (value !== undefined) data.Value = value;
      data.Entry = entry.line;
      let rendered: string;
      try {
        rendered = compiled.execute(data);
      } catch (err) {
        countFailure(err);
        templateFailed({ error: (err as Error).message });
        return entry;
      }
      if (rendered === '') delete extracted[source];
      else extracted[source] = rendered;
      return entry;
    },
  };
}
