import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { templateFailureCounter, templateFailureReason } from '../../core/template-failures.js';
import { TemplateBudgetError, TemplateExecError } from '../../lib/template/index.js';

describe('template failures', () => {
  it('tells an execution error from each limit of the budget', () => {
    expect(templateFailureReason(new TemplateExecError('template: t: x'))).toBe('error');
    expect(templateFailureReason(new TemplateBudgetError('template: t: x', 'steps'))).toBe('step_budget');
    expect(templateFailureReason(new TemplateBudgetError('template: t: x', 'size'))).toBe('size_budget');
    expect(templateFailureReason(new TemplateBudgetError('template: t: x', 'time'))).toBe('time_budget');
  });

  it('counts by stage and reason, one counter per registry, registered on the first failure', async () => {
    const registry = new Registry();
    const template = templateFailureCounter(registry, 'template');
    const replace = templateFailureCounter(registry, 'replace');
    expect(registry.getSingleMetric('logs_process_template_failures_total')).toBeUndefined();
    template(new TemplateBudgetError('template: t: x', 'time'));
    template(new TemplateBudgetError('template: t: x', 'time'));
    replace(new TemplateExecError('template: t: x'));
    const text = await registry.getSingleMetricAsString('logs_process_template_failures_total');
    expect(text).toContain('logs_process_template_failures_total{stage="template",reason="time_budget"} 2');
    expect(text).toContain('logs_process_template_failures_total{stage="replace",reason="error"} 1');
  });
});
