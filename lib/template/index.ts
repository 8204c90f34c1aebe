/**
 * Go `text/template` for Rivulet: the engine behind `stage.template` and `stage.replace`, with
 * the reference's function map (Go built-ins + sprig v3.3.0 + the reference's own functions).
 *
 * @example
 *   const t = parseTemplate('{{ .Value | ToUpper }}', { funcs: referenceFuncs });
 *   t.execute({ Value: 'abc' }); // 'ABC'
 */
export { Template, parseTemplate, type ParseTemplateOptions } from './template.js';
export { type BudgetLimit, TemplateBudgetError, TemplateExecError, TemplateParseError, GoError } from './errors.js';
export { DEFAULT_EXECUTION_BUDGET, type ExecutionBudget, type RenderClock } from './budget.js';
export { defineFunc, type FuncMap, type TemplateFunc } from './func.js';
export { builtinFuncs } from './builtins.js';
export { Sprint, Sprintf, Sprintln } from './gofmt.js';
export { hostlessReferenceFuncs, referenceFuncs, sprigFuncs } from './funcs/index.js';
export { withoutHostAccess } from './funcs/host-access.js';
