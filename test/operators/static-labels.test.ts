import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { buildPipeline, ingress } from '../../core/pipeline.js';
import { staticLabels } from '../../operators/static-labels.js';
import { entry, runConfig } from '../support/run-stages.js';

describe('stage.static_labels', () => {
  it('sets each pair, overwriting an existing label', () => {
    const { entries } = runConfig('stage.static_labels { values = { env = "prod", app = "new" } }', [entry('l', { app: 'old' })]);
    expect(entries[0]!.labels).toEqual({ app: 'new', env: 'prod' });
  });

  it('ignores pairs whose value is empty, neither setting nor removing the label', () => {
    const { entries } = runConfig('stage.static_labels { values = { app = "", env = "" } }', [entry('l', { app: 'kept' })]);
    expect(entries[0]!.labels).toEqual({ app: 'kept' });
  });

  it('sets a label named __proto__ as an ordinary label', () => {
    // Built from a config object: the config language's map decoding is not what is tested here.
    const values: Record<string, string> = JSON.parse('{"__proto__":"s"}');
    const built = buildPipeline([staticLabels({ values }).spec], { clock: new ManualClock(0n), registry: new Registry() });
    const out = built.process!(ingress(entry('l', { app: 'a' })))!;
    built.dispose();
    expect(Object.getPrototypeOf(out.labels)).toBe(Object.prototype);
    expect(Object.entries(out.labels)).toEqual([
      ['app', 'a'],
      ['__proto__', 's'],
    ]);
  });

  it('does not mirror the new labels into the extracted map', () => {
    const { entries } = runConfig('stage.static_labels { values = { env = "prod" } }', [entry('l')]);
    expect(entries[0]!.extracted).toEqual({});
  });

  it('rejects an empty label name with its position, unquoted as the reference prints it', () => {
    expect(() => runConfig('stage.static_labels {\n  values = { "" = "x" }\n}', [])).toThrow(
      /^test\.alloy:2:3: stage\.static_labels: invalid label name: $/,
    );
  });

  it('never changes the line and leaves only listed labels changed (property)', () => {
    const name = fc.stringMatching(/^[a-z_][a-z0-9_]{0,6}$/);
    fc.assert(
      fc.property(
        fc.dictionary(name, fc.string({ maxLength: 5 })),
        fc.dictionary(name, fc.string({ minLength: 1, maxLength: 5 })),
        fc.string(),
        (start, values, line) => {
          const config = `stage.static_labels { values = { ${Object.entries(values)
            .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
            .join(', ')} } }`;
          const [out] = runConfig(config, [entry(line, { ...start })]).entries;
          expect(out!.line).toBe(line);
          expect(out!.labels).toEqual({ ...start, ...values });
        },
      ),
      { numRuns: 100 },
    );
  });
});
