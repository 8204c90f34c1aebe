import { describe, expect, it } from 'vitest';
import type { Block } from '../../../lib/config/ast.js';
import { parseConfig } from '../../../lib/config/parser.js';
import { attributesOf, blockPathLabel, blocksOf } from '../../../lib/config/walk.js';

const file = parseConfig(
  'logs.process "default" {\n  forward_to = []\n  stage.json {}\n  stage.match { selector = "{}" }\n  stage.json {}\n}',
  'f',
);
const component = file.body[0] as Block;

describe('blockPathLabel', () => {
  it('names a block by its name and quoted label', () => {
    expect(blockPathLabel(component)).toBe('logs.process "default"');
    expect(blockPathLabel(component.body[1] as Block)).toBe('stage.json');
  });

  it('quotes a label that is not an identifier the way Go quotes strings', () => {
    expect(blockPathLabel({ ...component, label: 'a "b"' })).toBe('logs.process "a \\"b\\""');
  });
});

describe('attributesOf and blocksOf', () => {
  it('list the statements of a body by kind, in order', () => {
    expect(attributesOf(component.body).map((a) => a.name)).toEqual(['forward_to']);
    expect(blocksOf(component.body).map((b) => b.name)).toEqual(['stage.json', 'stage.match', 'stage.json']);
    expect(blocksOf(component.body, 'stage.json')).toHaveLength(2);
  });
});
