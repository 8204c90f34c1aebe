import { describe, expect, it } from 'vitest';
import { planPattern } from '../../../lib/regex/compile.js';
import { nodeLinearTimeHost } from '../../../lib/regex/linear-time.js';
import { nodeRe2Engine } from '../../../lib/regex/node-re2-engine.js';

const reasonFor = (pattern: string): string | null => {
  const { plan } = planPattern(nodeRe2Engine, nodeLinearTimeHost(), pattern);
  return plan.engine === 're2' ? plan.reason : null;
};

describe('which patterns have an exact V8 translation', () => {
  it.each([
    ['(a|(b))+', 'a capture group inside a repetition can be skipped by an iteration'],
    ['(?:x(a)?)*', 'a capture group inside a repetition can be skipped by an iteration'],
    ['(a*)*', 'a repeated subexpression can match the empty string'],
    ['(a*)??', 'a repeated subexpression can match the empty string'],
    ['(?:|a)??', 'a repeated subexpression can match the empty string'],
    ['(\\b)?', 'a repeated subexpression can match the empty string'],
    ['(?:\\b)+', 'a repeated subexpression can match the empty string'],
    ['\\C', '\\C matches single UTF-8 bytes'],
    ['(?m)^a\\z', 'multi-line and whole-text anchors are mixed'],
    ['(a){20}', 'V8 cannot run a translation of reasonable size in linear time'],
    ['\\pL{0,100}', 'V8 cannot run a translation of reasonable size in linear time'],
  ])('sends %s to RE2: %s', (pattern, reason) => {
    expect(reasonFor(pattern)).toBe(reason);
  });

  it.each([
    '(a)+',
    '((a)|b)c+',
    '(a|b)*',
    '(?:(a)b)+',
    '(a*){2}',
    '(?:a*){0}',
    'a(?i)b',
    '(?i)(?m)^k$',
    '(\\d{1,3}\\.){3}',
    'x{1000}',
    '(a*)?',
    '(?:|a)?',
    '"(?P<agent>[^"]*)?"',
  ])('translates %s', (pattern) => {
    expect(reasonFor(pattern)).toBeNull();
  });
});
