/**
 * Compiled Go templates: `parseTemplate` parses once (syntax and function names are checked
 * then), `Template.execute` renders against data as many times as needed.
 */
import { DEFAULT_EXECUTION_BUDGET, type ExecutionBudget, monotonicClock, type RenderClock } from './budget.js';
import { builtinFuncs } from './builtins.js';
import { execute, type Program } from './exec.js';
import type { FuncMap, TemplateFunc } from './func.js';
import { parseTrees, type TreeSet } from './parser.js';

export interface ParseTemplateOptions {
  /** The template's name, used in error messages (Go's `template.New(name)`). */
  readonly name?: string;
  /** Functions added on top of Go's built-ins (same-named entries replace built-ins). */
  readonly funcs?: FuncMap;
  /**
   * What each render may spend (steps, output bytes, list elements, wall time), on top of
   * DEFAULT_EXECUTION_BUDGET; going over fails the render with a TemplateBudgetError.
   */
  readonly budget?: Partial<ExecutionBudget>;
  /** Milliseconds on a monotonic clock, for the time limit (`performance.now` by default; tests pass a fake). */
  readonly now?: RenderClock;
}

const DEFAULT_NAME = 'template';

/** Go's findFunction: the template's own functions first, then the built-ins. */
function functionLookup(funcs: FuncMap | undefined): (name: string) => TemplateFunc | undefined {
  return (name) =>
    (funcs !== undefined && Object.hasOwn(funcs, name) ? funcs[name] : undefined) ??
    (Object.hasOwn(builtinFuncs, name) ? builtinFuncs[name] : undefined);
}

/** A parsed template, ready to render. */
export class Template {
  private readonly program: Program;

  /** @internal use parseTemplate */
  constructor(
    readonly name: string,
    text: string,
    trees: TreeSet,
    lookupFunc: (name: string) => TemplateFunc | undefined,
    budget: ExecutionBudget = DEFAULT_EXECUTION_BUDGET,
    readonly now: RenderClock = monotonicClock,
  ) {
    this.program = { text, parseName: name, trees, lookupFunc, budget, now };
  }

  /**
   * Renders the template with `data` as dot (`.`). Data follows the value model of `values.ts`:
   * strings, numbers (float64), booleans, arrays, plain objects, null.
   *
   * The render's time counts from `since`, a reading of `now` taken earlier, when given: several
   * renders for one entry then share one time budget.
   *
   * @throws TemplateExecError when Go's executor would return an error, TemplateBudgetError
   *   (a TemplateExecError) when the render goes over its execution budget
   */
  execute(data: unknown, options: { readonly since?: number } = {}): string {
    return execute(this.program, this.name, data, options.since);
  }
}

/**
 * Parses Go template text.
 *
 * @throws TemplateParseError with Go's message, e.g. `template: t:1: function "foo" not defined`
 * @example parseTemplate('{{ .a | printf "%05d" }}').execute({ a: 1 }) // '%!d(float64=1)'
 */
export function parseTemplate(text: string, options: ParseTemplateOptions = {}): Template {
  const name = options.name ?? DEFAULT_NAME;
  const lookupFunction = functionLookup(options.funcs);
  const trees = parseTrees(text, { name, lookupFunction });
  const budget = options.budget === undefined ? DEFAULT_EXECUTION_BUDGET : { ...DEFAULT_EXECUTION_BUDGET, ...options.budget };
  return new Template(name, text, trees, lookupFunction, budget, options.now);
}
