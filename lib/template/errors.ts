import { DataError } from '../data-error.js';

/** A template that cannot be parsed; the message is Go's (`template: NAME:LINE: …`). */
export class TemplateParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateParseError';
  }
}

/**
 * A render that failed; the message follows Go's ExecError
 * (`template: NAME:LINE:COL: executing "NAME" at <NODE>: …`).
 */
export class TemplateExecError extends DataError {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateExecError';
  }
}

/** Which limit of the execution budget a render went over: steps, a size, or wall time. */
export type BudgetLimit = 'steps' | 'size' | 'time';

/**
 * A render stopped because it went over its execution budget (see `budget.ts`); the message is
 * an ExecError's, ending in `execution budget exceeded: …`.
 */
export class TemplateBudgetError extends TemplateExecError {
  constructor(
    message: string,
    readonly limit: BudgetLimit,
  ) {
    super(message);
    this.name = 'TemplateBudgetError';
  }
}

/**
 * An error a template function returns (Go's non-nil `error` result or a recovered panic). The
 * executor reports it as `error calling NAME: MESSAGE`.
 */
export class GoError extends DataError {
  constructor(message: string) {
    super(message);
    this.name = 'GoError';
  }
}
