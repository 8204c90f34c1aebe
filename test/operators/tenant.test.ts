import { describe, expect, it } from 'vitest';
import { entry, runConfig } from '../support/run-stages.js';

describe('stage.tenant', () => {
  it('sets a fixed tenant in the reserved label', () => {
    const { entries } = runConfig('stage.tenant { value = "team-a" }', [entry('l')]);
    expect(entries[0]!.labels).toEqual({ __tenant_id__: 'team-a' });
  });

  it('takes the tenant from an extracted value, stringified', () => {
    const { entries } = runConfig('stage.tenant { source = "t" }', [entry('l', {}, { extracted: { t: 42 } })]);
    expect(entries[0]!.labels.__tenant_id__).toBe('42');
  });

  it('takes the tenant from a label and leaves it unset when the label is missing', () => {
    const { entries } = runConfig('stage.tenant { label = "team" }', [entry('a', { team: 'x' }), entry('b')]);
    expect(entries.map((e) => e.labels.__tenant_id__)).toEqual(['x', undefined]);
  });

  it('never overwrites with an empty tenant', () => {
    const { entries } = runConfig('stage.tenant { source = "t" }', [entry('l', { __tenant_id__: 'old' }, { extracted: { t: '' } })]);
    expect(entries[0]!.labels.__tenant_id__).toBe('old');
  });

  it('requires exactly one of label, source and value, in the reference words', () => {
    expect(() => runConfig('stage.tenant { }', [])).toThrow(/^test\.alloy:1:1: stage\.tenant: label, source or value config are required$/);
    expect(() => runConfig('stage.tenant {\n  value = "a"\n  label = "b"\n}', [])).toThrow(
      'stage.tenant: label, source and value are mutually exclusive: you should set source, value or label but not all',
    );
  });
});

describe('stage.tenant with names that exist on Object.prototype', () => {
  it('leaves the tenant unset for a label or source named like a built-in member', () => {
    const { entries } = runConfig('stage.tenant { label = "toString" }\nstage.tenant { source = "constructor" }', [entry('l')]);
    expect(entries[0]!.labels).toEqual({});
  });
});
