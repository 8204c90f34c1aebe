/**
 * The shape of template functions. Go's executor converts and checks arguments by the
 * function's parameter types, so every function declares them: `T_STRING` rejects a number
 * literal and a missing value, `T_ANY` accepts anything (a missing value becomes nil),
 * `T_REFLECT_VALUE` passes the value through untouched (missing stays `undefined`).
 */
import type { GoType } from './values.js';

export interface TemplateFunc {
  /** Parameter types; with `variadic`, the last entry is the type of each extra argument. */
  readonly params: readonly GoType[];
  readonly variadic?: boolean;
  /** The implementation. Throw GoError to return a Go error. */
  readonly fn: (...args: never[]) => unknown;
  /**
   * Built-ins the executor treats specially: short-circuit `and`/`or`, `call`, and `slice`,
   * whose index arguments Go does not unwrap from their interface (see `InterfaceValue`).
   */
  readonly special?: 'and' | 'or' | 'call' | 'slice';
}

/** Functions available to a template by name (Go's `template.FuncMap`). */
export type FuncMap = Readonly<Record<string, TemplateFunc>>;

/** Declares a template function. */
export function defineFunc<A extends unknown[]>(params: readonly GoType[], fn: (...args: A) => unknown, variadic = false): TemplateFunc {
  return { params, fn: fn as unknown as TemplateFunc['fn'], variadic };
}
