/**
 * Test helpers: render a template with the reference's function map. They test what functions
 * return, so a render has no time limit: a key generation on a loaded machine takes seconds.
 */
import { parseTemplate, referenceFuncs, type FuncMap } from '../../../lib/template/index.js';

const UNTIMED = { maxDuration: Number.POSITIVE_INFINITY };

/** Renders `template` with `data` (default: no data) and the reference's functions. */
export function render(template: string, data: unknown = {}, funcs: FuncMap = referenceFuncs): string {
  return parseTemplate(template, { name: 'tpl', funcs, budget: UNTIMED }).execute(data);
}

/** The error message a render fails with (fails the test when it renders). */
export function renderError(template: string, data: unknown = {}, funcs: FuncMap = referenceFuncs): string {
  try {
    const out = parseTemplate(template, { name: 'tpl', funcs, budget: UNTIMED }).execute(data);
    throw new Error(`expected an error, rendered ${JSON.stringify(out)}`);
  } catch (err) {
    if ((err as Error).message.startsWith('expected an error')) throw err;
    return (err as Error).message;
  }
}
