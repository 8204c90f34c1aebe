import { describe, expect, it } from 'vitest';
import { contextAt, offsetOf, wordAt } from '../../../playground/web/context.js';

/** The context at the `|` marker. */
function at(textWithCursor: string) {
  const pos = textWithCursor.indexOf('|');
  return contextAt(textWithCursor.slice(0, pos) + textWithCursor.slice(pos + 1), pos);
}

describe('contextAt', () => {
  it('sees the top level as a statement start with no enclosing block', () => {
    expect(at('stage.js|')).toEqual({ blocks: [], statementStart: true });
  });

  it('follows labelled and nested blocks', () => {
    expect(at('logs.process "default" {\n  stage.match {\n    selector = "{a=\\"b\\"}"\n    stage.json {\n      ex|')).toEqual({
      blocks: ['logs.process', 'stage.match', 'stage.json'],
      statementStart: true,
    });
  });

  it('leaves a block at its closing brace', () => {
    expect(at('stage.json {\n  expressions = { a = "" }\n}\n|')).toEqual({ blocks: [], statementStart: true });
  });

  it('knows the attribute whose value is being written, across lines of an object', () => {
    expect(at('stage.json {\n  expressions = {\n    level = "",\n    |')).toEqual({
      blocks: ['stage.json'],
      attribute: 'expressions',
      statementStart: false,
    });
    expect(at('stage.labels {\n  source_type = |')).toEqual({ blocks: ['stage.labels'], attribute: 'source_type', statementStart: false });
  });

  it('ignores braces inside strings and comments', () => {
    expect(at('// stage.x {\nstage.regex {\n  expression = "{[(" /* } */\n  |')).toEqual({ blocks: ['stage.regex'], statementStart: true });
    expect(at('stage.regex {\n  expression = `a\n}`\n  |')).toEqual({ blocks: ['stage.regex'], statementStart: true });
  });

  it('treats nested non-stage blocks like metric.counter as blocks', () => {
    expect(at('stage.metrics {\n  metric.counter {\n    na|')).toEqual({
      blocks: ['stage.metrics', 'metric.counter'],
      statementStart: true,
    });
  });
});

describe('wordAt', () => {
  it('finds the dotted name around a position', () => {
    expect(wordAt('  stage.json {', 5)).toEqual({ from: 2, to: 12, word: 'stage.json' });
    expect(wordAt('a = 1', 3)).toBeUndefined();
  });
});

describe('offsetOf', () => {
  it('turns a line and a code-point column into a string offset', () => {
    expect(offsetOf('ab\ncd', 2, 2)).toBe(4);
    expect(offsetOf('😀x = 1\ny', 1, 2)).toBe(2);
    expect(offsetOf('ab', 5, 1)).toBe(2);
  });
});
