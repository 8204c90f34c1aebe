import { describe, expect, it } from 'vitest';
import { closestName, didYouMean } from '../../lib/suggest.js';

describe('closestName', () => {
  const stages = ['stage.labels', 'stage.label_drop', 'stage.label_keep', 'stage.json', 'stage.logfmt', 'stage.limit'];

  it('finds a typo or a missing plural', () => {
    expect(closestName('stage.label', stages)).toBe('stage.labels');
    expect(closestName('stage.jsno', stages)).toBe('stage.json');
    expect(closestName('stage.logfnt', stages)).toBe('stage.logfmt');
  });

  it('suggests nothing when no candidate is close', () => {
    expect(closestName('stage.kafka', stages)).toBeUndefined();
    expect(closestName('x', ['yz'])).toBeUndefined();
  });

  it('allows one edit for short names', () => {
    expect(closestName('tpye', ['type'])).toBe('type');
    expect(closestName('tp', ['type'])).toBeUndefined();
  });
});

describe('didYouMean', () => {
  it('words the suggestion with the given quoting', () => {
    expect(didYouMean('sourc', ['source', 'target'])).toBe(' (did you mean "source"?)');
    expect(didYouMean('ouput', ['output'], (s) => `--${s}`)).toBe(' (did you mean --output?)');
    expect(didYouMean('zzz', ['source'])).toBe('');
  });
});
