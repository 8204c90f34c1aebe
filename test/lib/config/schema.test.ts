import { describe, expect, it } from 'vitest';
import type { Block } from '../../../lib/config/ast.js';
import type { ConfigError } from '../../../lib/config/errors.js';
import type { EvalScope } from '../../../lib/config/evaluate.js';
import { parseConfig } from '../../../lib/config/parser.js';
import { errorsOf } from '../../support/graph-harness.js';
import {
  type BlockSpec,
  decodeBlock,
  decodeOptions,
  decodeValues,
  type FieldType,
  nestedValues,
  t,
  typeName,
} from '../../../lib/config/schema.js';

const scope: EvalScope = { env: () => undefined, resolve: () => undefined };

/** The first block of `text`, as `s.alloy`. */
function blockOf(text: string): Block {
  return parseConfig(text, 's.alloy').body[0] as Block;
}

describe('a duration field in milliseconds with a minimum', () => {
  const spec = {
    fields: {
      period: { kind: t.durationMs, default: 1_000_000_000n, min: 1, doc: '' },
      wait: { kind: t.durationMs, default: 5_000_000n, min: 5, belowMin: 'wait must be at least 5ms', doc: '' },
    },
  } satisfies BlockSpec;

  it('decodes to whole milliseconds and checks the minimum in milliseconds', () => {
    expect(decodeBlock(blockOf('b {\n  period = "1500us"\n}'), spec, scope, ['b']).values).toEqual({ period: 1, wait: 5 });
    expect(errorsOf(() => decodeBlock(blockOf('b {\n  period = "999us"\n}'), spec, scope, ['b']))).toEqual([
      's.alloy:2:3: b: attribute "period": must be at least 1, got 0',
    ]);
  });

  it("says a value below the minimum in the field's own words, in a config and in options given in code", () => {
    expect(errorsOf(() => decodeBlock(blockOf('b {\n  wait = "4ms"\n}'), spec, scope, ['b']))).toEqual([
      's.alloy:2:3: b: wait must be at least 5ms',
    ]);
    expect(errorsOf(() => decodeOptions(spec, { wait: '4ms' }, ['b']))).toEqual(['b: wait must be at least 5ms']);
    expect(decodeOptions(spec, { wait: '5ms' }, ['b'])).toEqual({ period: 1000, wait: 5 });
  });
});

describe("a decoding's wording", () => {
  const spec = {
    fields: {
      line: { kind: t.string, doc: '' },
      labels: { kind: t.map(t.string), doc: '' },
      hosts: { kind: t.list(t.string), doc: '' },
    },
  } satisfies BlockSpec;
  const wording = {
    numbersAsStrings: false,
    mistyped: (at: string, kind: FieldType, value: unknown) => `"${at}" must be a ${typeName(kind)}, not ${JSON.stringify(value)}`,
  };
  const decode =
    (text: string, options = {}) =>
    () =>
      decodeBlock(blockOf(text), spec, scope, ['b'], options);

  it('names the place inside the value and takes no number for a string', () => {
    expect(errorsOf(decode('b {\n  line = 1\n  labels = { app = true }\n  hosts = ["a", 2]\n}', { wording }))).toEqual([
      's.alloy:2:10: b: "line" must be a string, not 1',
      's.alloy:3:12: b: "labels.app" must be a string, not true',
      's.alloy:4:11: b: "hosts[1]" must be a string, not 2',
    ]);
  });

  it("keeps the reference's words and conversions without one", () => {
    expect(errorsOf(decode('b {\n  labels = { app = true }\n}'))).toEqual([
      's.alloy:2:12: b: attribute "labels": expected string, got boolean',
    ]);
    expect(decode('b {\n  line = 1\n  hosts = ["a", 2]\n}')()).toMatchObject({ values: { line: '1', hosts: ['a', '2'] } });
  });
});

describe('decoding that keeps its errors', () => {
  const spec = {
    fields: { name: { kind: t.string, doc: '' }, size: { kind: t.int, doc: '' } },
    blocks: {
      item: { doc: '', multiple: true, fields: { id: { kind: t.string, required: true, doc: '' } } },
      only: { doc: '', required: true, fields: { on: { kind: t.bool, doc: '' } } },
    },
  } satisfies BlockSpec;

  it('reports every error and leaves out the attributes and nested blocks that failed, typed from the spec', () => {
    const errors: ConfigError[] = [];
    const text = 'b {\n  name = "x"\n  size = "big"\n  item { id = "1" }\n  item { }\n  item { id = "3" }\n  only { on = 1 }\n}';
    const { values, decoded } = decodeValues(blockOf(text), spec, scope, ['b'], { errors });
    expect(errors.map((e) => e.message)).toEqual([
      's.alloy:3:10: b: attribute "size": expected int, got string',
      's.alloy:5:3: b > item: missing required attribute "id"',
      's.alloy:7:15: b > only: attribute "on": expected bool, got number',
    ]);
    expect(values).toEqual({ name: 'x', item: [{ id: '1' }, { id: '3' }] });
    const items = nestedValues(decoded, 'item', spec.blocks.item);
    expect(items.map((i) => [i.values.id, i.block.pos.line])).toEqual([
      ['1', 4],
      ['3', 6],
    ]);
  });

  it('throws them together without a place to keep them', () => {
    expect(errorsOf(() => decodeBlock(blockOf('b {\n  size = "big"\n  item { }\n}'), spec, scope, ['b']))).toEqual([
      's.alloy:2:10: b: attribute "size": expected int, got string',
      's.alloy:3:3: b > item: missing required attribute "id"',
      's.alloy:1:1: b: missing required block "only"',
    ]);
  });
});
