/**
 * The counter of failed template renders in stage.template and stage.replace, by stage and reason:
 * `error` for an execution error, `step_budget`, `size_budget` and `time_budget` for a render
 * stopped by its execution budget. The reference has no such counter: its renders have no budget,
 * and an execution error is only logged.
 */
import type { Registry } from 'prom-client';
import { type BudgetLimit, TemplateBudgetError } from '../lib/template/index.js';
import { perRegistry } from './metrics.js';

const failureCounter = perRegistry((_registry, make) =>
  make.counter(
    'logs_process_template_failures_total',
    'Template renders that failed, by stage and reason (error, step_budget, size_budget, time_budget).',
    ['stage', 'reason'],
  ),
);

const BUDGET_REASONS: Readonly<Record<BudgetLimit, string>> = { steps: 'step_budget', size: 'size_budget', time: 'time_budget' };

/** Why a render failed, as the counter's `reason` label says it. */
export function templateFailureReason(err: unknown): string {
  return err instanceof TemplateBudgetError ? BUDGET_REASONS[err.limit] : 'error';
}

/**
 * Returns the function a stage calls with each render error: it counts the failure under the
 * stage's name. The counter is registered on first use, so a registry without failures has none.
 *
 * @example
 *   const countFailure = templateFailureCounter(ctx.metrics.registry, 'template');
 *   countFailure(err); // logs_process_template_failures_total{stage="template",reason="time_budget"} 1
 */
export function templateFailureCounter(registry: Registry, stage: string): (err: unknown) => void {
  return (err) => failureCounter(registry).inc({ stage, reason: templateFailureReason(err) });
}
