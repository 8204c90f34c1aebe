import fc from 'fast-check';
import { Observable } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../core/entry.js';
import { ConfigError } from '../../lib/config/errors.js';
import { t } from '../../lib/config/schema.js';
import { defineStage, unregisterStage } from '../../core/stage.js';
import {
  configErrorsArePositioned,
  doesNotTouch,
  entryStream,
  idempotent,
  InvariantError,
  neverAddsEntries,
  outputWithinBounds,
  preservesOrder,
  runStage,
} from '../../testing/index.js';
import { decolorize, staticLabels } from '../../operators/index.js';

const SEED = { seed: 7, numRuns: 30 };

/** Sends every entry on twice. */
const twice = defineStage<Record<string, never>>({
  name: 'kit_twice',
  doc: 'Broken on purpose: duplicates entries.',
  fields: {},
  build: () => ({
    kind: 'operator',
    operator: (source) =>
      new Observable<Entry>((subscriber) =>
        source.subscribe({
          next: (entry) => {
            subscriber.next(entry);
            subscriber.next({ ...entry, extracted: { ...entry.extracted } });
          },
          error: (err) => subscriber.error(err),
          complete: () => subscriber.complete(),
        }),
      ),
  }),
});

/** Holds everything and sends it on backwards at the end. */
const backwards = defineStage<Record<string, never>>({
  name: 'kit_backwards',
  doc: 'Broken on purpose: reverses entries.',
  fields: {},
  build: () => ({
    kind: 'operator',
    operator: (source) =>
      new Observable<Entry>((subscriber) => {
        const held: Entry[] = [];
        return source.subscribe({
          next: (entry) => held.push(entry),
          error: (err) => subscriber.error(err),
          complete: () => {
            for (const entry of held.reverse()) subscriber.next(entry);
            subscriber.complete();
          },
        });
      }),
  }),
});

/** Appends a suffix to the line: neither idempotent nor line-preserving nor bounded. */
const shout = defineStage<{ suffix: string }>({
  name: 'kit_shout',
  doc: 'Broken on purpose: appends to the line.',
  fields: { suffix: { kind: t.string, default: '!', doc: 'Appended to every line.' } },
  build: (config) => ({ kind: 'map', process: (entry) => ((entry.line += config.suffix), entry) }),
});

/** Validates with a plain Error instead of a config error. */
const careless = defineStage<{ level: number }>({
  name: 'kit_careless',
  doc: 'Broken on purpose: rejects configs without a position.',
  fields: { level: { kind: t.int, default: 1, doc: 'Must be positive.' } },
  validate: (config) => {
    if (config.level < 0) throw new Error('level must be positive');
  },
  build: () => ({ kind: 'map', process: (entry) => entry }),
});

afterAll(() => ['kit_twice', 'kit_backwards', 'kit_shout', 'kit_careless'].forEach(unregisterStage));

/** The error an invariant helper threw. */
function failureOf(check: () => void): InvariantError {
  try {
    check();
  } catch (err) {
    if (err instanceof InvariantError) return err;
    throw err;
  }
  throw new Error('the invariant held');
}

const MINIMAL_INPUT = 'input (1 entry):\n  #0 at 0ms {} 2000-01-01T00:00:00.000000000Z "request"';

describe('neverAddsEntries', () => {
  it('holds for a stage that only changes entries', () => {
    neverAddsEntries(staticLabels, { values: { env: 'prod' } }, SEED);
  });

  it('fails on a stage that duplicates entries, showing the shrunk input and the output', () => {
    expect(failureOf(() => neverAddsEntries(twice, {}, SEED)).message).toMatch(
      new RegExp(
        `^${escape(
          [
            'neverAddsEntries does not hold for stage.kit_twice: 2 entries out of 1 in',
            'config: {}',
            MINIMAL_INPUT,
            'output (2 entries):',
            '  #0 at 0ms from input #0 {} 2000-01-01T00:00:00.000000000Z "request"',
            '  #1 at 0ms from input #0 {} 2000-01-01T00:00:00.000000000Z "request"',
            'replay with { seed: 7, path: "',
          ].join('\n'),
        )}[0-9:]+" \\} \\(shrunk \\d+ times\\)$`,
      ),
    );
  });
});

describe('preservesOrder', () => {
  it('holds for a per-entry stage', () => {
    preservesOrder(decolorize, {}, SEED);
  });

  it('fails on a stage that reverses a stream, naming the two outputs out of order', () => {
    const message = failureOf(() => preservesOrder(backwards, {}, SEED)).message;
    expect(message.split('\n').slice(0, 5)).toEqual([
      'preservesOrder does not hold for stage.kit_backwards: output #1 (from input #0) left after output #0 (from input #1) of the same stream {}',
      'config: {}',
      'input (2 entries):',
      '  #0 at 0ms {} 2000-01-01T00:00:00.000000000Z "request"',
      '  #1 at 0ms {} 2000-01-01T00:00:00.000000000Z "request"',
    ]);
    expect(message).toContain(
      'output (2 entries):\n  #0 at 0ms from input #1 {} 2000-01-01T00:00:00.000000000Z "request"\n  #1 at 0ms from input #0',
    );
  });

  it('lets entries of different streams overtake each other', () => {
    const streams = entryStream({ streams: fc.constant([{ app: 'a' }, { app: 'b' }]), maxLength: 4 });
    // Reversal is caught only within one stream: with single-entry streams it holds.
    preservesOrder(
      backwards,
      {},
      { ...SEED, inputs: streams.filter((items) => new Set(items.map((i) => i.entry.labels.app)).size === items.length) },
    );
  });
});

describe('idempotent', () => {
  it('holds for decolorize', () => {
    idempotent(decolorize, {}, SEED);
  });

  it('fails on a stage that appends to the line, showing both runs', () => {
    const message = failureOf(() => idempotent(shout, {}, SEED)).message;
    expect(message.split('\n').slice(0, 5)).toEqual([
      'idempotent does not hold for stage.kit_shout: a second run changed output #0: line "request!" -> "request!!"',
      'config: {}',
      MINIMAL_INPUT.split('\n')[0],
      MINIMAL_INPUT.split('\n')[1],
      'output (1 entry):',
    ]);
    expect(message).toContain('second run output (1 entry):\n  #0 at 0ms from input #0 {} 2000-01-01T00:00:00.000000000Z "request!!"');
  });
});

describe('doesNotTouch', () => {
  it('holds for the fields a stage leaves alone', () => {
    doesNotTouch(shout, {}, ['labels', 'timestamp', 'structuredMetadata', 'extracted'], SEED);
  });

  it('fails when a listed field changes, showing before and after', () => {
    const message = failureOf(() => doesNotTouch(shout, { suffix: '?' }, ['line', 'labels'], SEED)).message;
    expect(message.split('\n').slice(0, 2)).toEqual([
      'doesNotTouch(line, labels) does not hold for stage.kit_shout: output #0 (from input #0) changed line "request" -> "request?"',
      'config: {"suffix":"?"}',
    ]);
  });
});

describe('outputWithinBounds', () => {
  it('holds for a bound the stage keeps', () => {
    outputWithinBounds(shout, {}, (out, input) => out.line.length === input!.line.length + 1, SEED);
  });

  it('fails with the description the bound returns', () => {
    const message = failureOf(() =>
      outputWithinBounds(
        shout,
        {},
        (out, input) => out.line.length <= input!.line.length || `line grew to ${out.line.length} characters`,
        SEED,
      ),
    ).message;
    expect(message.split('\n')[0]).toBe(
      'outputWithinBounds does not hold for stage.kit_shout: output #0 is out of bounds: line grew to 8 characters',
    );
  });

  it('takes an arbitrary of configs and shows the failing one as text', () => {
    const configs = fc.constantFrom('stage.kit_shout { suffix = "" }', 'stage.kit_shout { suffix = "!!" }');
    const message = failureOf(() => outputWithinBounds(shout, configs, (out, input) => out.line === input!.line, SEED)).message;
    expect(message.split('\n').slice(0, 3)).toEqual([
      'outputWithinBounds does not hold for stage.kit_shout: output #0 is out of bounds',
      'config:',
      '    stage.kit_shout { suffix = "!!" }',
    ]);
  });
});

describe('configErrorsArePositioned', () => {
  it('holds for a stage whose validation raises field errors', () => {
    configErrorsArePositioned(staticLabels, SEED);
  });

  it('fails on a stage that rejects a config with a plain Error', () => {
    const message = failureOf(() =>
      configErrorsArePositioned(careless, { ...SEED, invalid: ['stage.kit_careless { level = -1 }'] }),
    ).message;
    expect(message.split('\n').slice(0, 3)).toEqual([
      'configErrorsArePositioned does not hold for stage.kit_careless: the config was rejected with Error: level must be positive instead of a positioned config error',
      'config:',
      '    stage.kit_careless { level = -1 }',
    ]);
  });

  it('fails when a config given as invalid is accepted', () => {
    const message = failureOf(() =>
      configErrorsArePositioned(careless, { ...SEED, invalid: ['stage.kit_careless { level = 3 }'] }),
    ).message;
    expect(message.split('\n')[0]).toBe(
      'configErrorsArePositioned does not hold for stage.kit_careless: the config was accepted, but it must be rejected (given as invalid)',
    );
  });
});

describe('runStage', () => {
  it('runs timed entries on virtual time and traces outputs to inputs', () => {
    const at = (atMs: number, line: string) => ({
      atMs,
      entry: { labels: { app: 'a' }, line, timestamp: 1n, structuredMetadata: [], extracted: {} },
    });
    const run = runStage(backwards, {}, [at(0, 'one'), at(250, 'two')]);
    expect(run.outputs.map((e) => e.line)).toEqual(['two', 'one']);
    expect(run.origins).toEqual([1, 0]);
    expect(run.emittedAtMs).toEqual([250, 250]);
    expect(run.inputs[0]!.extracted).toEqual({ app: 'a' });
    expect(run.completed).toBe(true);
  });

  it('rejects config text that does not hold exactly one block of the stage', () => {
    expect(() => runStage(shout, 'stage.decolorize { }', [])).toThrow(
      'expected the config text to hold exactly one stage.kit_shout block, got stage.decolorize',
    );
  });

  it('reports a config the stage rejects before generating anything', () => {
    expect(() => neverAddsEntries(shout, { suffix: 1 as unknown as string, nope: true }, SEED)).toThrow(ConfigError);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
