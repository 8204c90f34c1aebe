import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Label } from '../../../lib/pyroscope/labels.js';
import { ensureServiceName, formatLabels } from '../../../receivers/profiles/labels.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100);

/** The label-builder rules written out plainly: last value wins, empty removes, sorted by name. */
function builder(pairs: readonly Label[]): Label[] {
  const values = new Map<string, string>();
  for (const { name, value } of pairs) {
    if (value === '') values.delete(name);
    else values.set(name, value);
  }
  return [...values].map(([name, value]) => ({ name, value })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The rule as the reference states it: set the target label to `__name__`'s value through the builder. */
function byDefinition(labels: readonly Label[]): Label[] {
  const name = labels.find((l) => l.name === '__name__')?.value ?? '';
  const target = labels.some((l) => l.name === 'service_name') ? 'app_name' : 'service_name';
  return builder([...labels, { name: target, value: name }]);
}

describe('ensureServiceName', () => {
  it('copies __name__ into service_name, or into app_name when service_name is there', () => {
    expect(ensureServiceName([{ name: '__name__', value: 'app' }])).toEqual([
      { name: '__name__', value: 'app' },
      { name: 'service_name', value: 'app' },
    ]);
    expect(
      ensureServiceName([
        { name: '__name__', value: 'app' },
        { name: 'service_name', value: 'svc' },
      ]),
    ).toEqual([
      { name: '__name__', value: 'app' },
      { name: 'app_name', value: 'app' },
      { name: 'service_name', value: 'svc' },
    ]);
    // No __name__: an existing app_name goes, as the builder removes a label set to empty.
    expect(
      ensureServiceName([
        { name: 'app_name', value: 'old' },
        { name: 'service_name', value: 'svc' },
      ]),
    ).toEqual([{ name: 'service_name', value: 'svc' }]);
  });

  it('matches the builder definition for any label list, built or not', () => {
    const name = fc.constantFrom('__name__', 'service_name', 'app_name', 'a', 'env', 'zone', 'Z', '');
    const pair = fc.record({ name, value: fc.constantFrom('', 'x', 'y', 'app') });
    const lists = fc.oneof(fc.array(pair, { maxLength: 8 }), fc.array(pair, { maxLength: 8 }).map(builder));
    fc.assert(
      fc.property(lists, (labels) => {
        const before = JSON.stringify(labels);
        expect(ensureServiceName(labels)).toEqual(byDefinition(labels));
        // The input is never changed.
        expect(JSON.stringify(labels)).toBe(before);
      }),
      { numRuns: numRuns * 5 },
    );
  });
});

describe('formatLabels', () => {
  it('prints a label set as the reference does, quoting names outside the legacy form', () => {
    expect(
      formatLabels([
        { name: 'app', value: 'a"b' },
        { name: 'k.8s', value: 'v' },
      ]),
    ).toBe('{app="a\\"b", "k.8s"="v"}');
  });
});
