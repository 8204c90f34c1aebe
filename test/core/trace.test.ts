import { describe, expect, it } from 'vitest';
import { StageEffects } from '../../core/trace.js';

describe('StageEffects', () => {
  it('gives each traced stage the effects noted while it ran, a nested stage its own', () => {
    const effects = new StageEffects();
    effects.note('outside any stage');
    const outer = effects.collect(() => {
      effects.note('a');
      const inner = effects.collect(() => {
        effects.note('b');
        return 1;
      });
      effects.note('c');
      return inner;
    });
    expect(outer).toEqual({ result: { result: 1, effects: ['b'] }, effects: ['a', 'c'] });
  });

  it('stops collecting for a stage that throws', () => {
    const effects = new StageEffects();
    expect(() =>
      effects.collect(() => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    const after = effects.collect(() => effects.note('x'));
    expect(after.effects).toEqual(['x']);
  });
});
