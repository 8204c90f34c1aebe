import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import type { Entry } from '../../../core/entry.js';
import { ComponentGraph } from '../../../core/runtime/graph.js';
import { componentDefinition, defineComponent, type ComponentArgs } from '../../../core/runtime/component.js';
import { loadStageModules } from '../../../core/stage-modules.js';
import { ConfigErrors } from '../../../lib/config/errors.js';
import { t } from '../../../lib/config/schema.js';
import type { LogsReceiver } from '../../../core/receiver.js';

/** docs/custom-components.md's module and config, the module importing the sources instead of the package. */
const DOC = readFileSync(join(import.meta.dirname, '../../../docs/custom-components.md'), 'utf8');
const block = (lang: string, marker: string): string => {
  const found = [...DOC.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!).find((b) => b.includes(marker));
  if (found === undefined) throw new Error(`no ${lang} block with ${marker} in docs/custom-components.md`);
  return found;
};
const INDEX = pathToFileURL(join(import.meta.dirname, '../../../index.ts')).href;
const dir = mkdtempSync(join(tmpdir(), 'rivulet-custom-components-'));
writeFileSync(join(dir, 'counter.mjs'), block('js', 'counter.mjs').replace("from 'rivulet'", `from ${JSON.stringify(INDEX)}`));
const CONFIG = block('alloy', 'counter.alloy').replace('logs.source.stdin "in"', 'logs.process "in"');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const entry = (line: string): Entry => ({ line, labels: {}, structuredMetadata: [], extracted: {}, timestamp: 0n }) as unknown as Entry;

function graphWith(stdout: PassThrough): ComponentGraph {
  return new ComponentGraph((id) => ({ id, clock: new ManualClock(), registry: new Registry(), stdout, log: () => {} }));
}

describe('a component defined in a stage module', () => {
  it('is registered by loading the module, and reported among its exports', async () => {
    const [loaded] = await loadStageModules(['./counter.mjs'], dir);
    expect(loaded).toEqual({ path: './counter.mjs', file: join(dir, 'counter.mjs'), stages: [], components: ['custom.counter'] });
    expect(componentDefinition('custom.counter')?.doc).toBe('Counts the entries it receives and prints the running total.');
    // The module's first import loads the whole library.
  }, 60_000);

  it("runs from a config: the docs example's totals, every 2 entries and at stop", async () => {
    await loadStageModules(['./counter.mjs'], dir);
    const stdout = new PassThrough();
    let printed = '';
    stdout.on('data', (d: Buffer) => (printed += d));
    const graph = graphWith(stdout);
    graph.load(CONFIG, 'counter.alloy');
    await graph.start();
    const receiver = (graph.component('custom.counter.lines')!.exports.receiver as unknown as { value: LogsReceiver }).value;
    await receiver.send([entry('a'), entry('b')]);
    await receiver.send([entry('c')]);
    await graph.stop();
    expect(printed).toBe('counted 2\ncounted 3\n');
  });

  it("reports a value out of the schema's range at its attribute, as the docs say", async () => {
    await loadStageModules(['./counter.mjs'], dir);
    const graph = graphWith(new PassThrough());
    let thrown: unknown;
    try {
      graph.load(CONFIG.replace('every = 2', 'every = 0'), 'counter.alloy');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigErrors);
    expect((thrown as ConfigErrors).errors.map(String)).toEqual([
      'counter.alloy:7:3: custom.counter "lines": attribute "every": must be at least 1, got 0',
    ]);
  });
});

describe('defineComponent', () => {
  it('hands build and update what validate made of the typed values, and places its failures at their attributes', async () => {
    const seen: unknown[] = [];
    defineComponent({
      name: 'test.typed',
      doc: 'Records its settings.',
      exportNames: [],
      fields: {
        size: { kind: t.bytes, default: '1KiB', doc: 'A size.' },
        wait: { kind: t.durationMs, default: 2_000_000_000n, doc: 'A wait.' },
        low: { kind: t.int, default: 0, doc: 'Lower bound.' },
        high: { kind: t.int, default: 10, doc: 'Upper bound.' },
      },
      validate: (values, checks) => {
        if (values.high < values.low) checks.fail('high must not be less than low', 'high');
        return { bytes: values.size, ms: values.wait, span: values.high - values.low };
      },
      build(args: ComponentArgs<{ bytes: number; ms: number; span: number }>) {
        seen.push(args.values);
        return {
          exports: {},
          health: () => ({ state: 'healthy', message: '', updatedAt: new Date(0) }),
          update: (next) => void seen.push(next.values),
          stop: async () => {},
        };
      },
    });
    const graph = graphWith(new PassThrough());
    graph.load('test.typed "a" {\n  size = "2MiB"\n}\n', 't.alloy');
    expect(await graph.reload('test.typed "a" {\n  wait = "1m"\n  low = 5\n  high = 7\n}\n', 't.alloy')).toEqual([]);
    expect(seen).toEqual([
      { bytes: 2 * 1024 * 1024, ms: 2000, span: 10 },
      { bytes: 1024, ms: 60_000, span: 2 },
    ]);
    const errors = (await graph.reload('test.typed "a" {\n  size = "lots"\n}\n', 't.alloy')).map(String);
    expect(errors).toEqual(['t.alloy:2:3: test.typed "a": attribute "size": units: invalid lots']);
    const crossed = (await graph.reload('test.typed "a" {\n  low = 3\n  high = 1\n}\n', 't.alloy')).map(String);
    expect(crossed).toEqual(['t.alloy:3:3: test.typed "a": high must not be less than low']);
    await graph.stop();
  });
});
