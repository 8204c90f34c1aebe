import { describe, expect, it } from 'vitest';
import { compileRegex, ensureLinearTimeFallback, linearTimeFallbackEnabled } from '../../../lib/regex/index.js';

/** Best of three runs, so a busy machine does not fail the test; a runaway match takes seconds every time. */
function bestMs(run: () => unknown): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    run();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

describe('linear-time matching', () => {
  it('has V8’s fallback in force once compileRegex has been called', () => {
    compileRegex('warm-up');
    expect(linearTimeFallbackEnabled()).toBe(true);
    // A RegExp compiled after the flag was set: without the fallback this takes many seconds.
    const raw = /(a+)+$/;
    expect(bestMs(() => raw.exec('a'.repeat(30) + '!'))).toBeLessThan(100);
  });

  it('can be switched on again without harm', () => {
    ensureLinearTimeFallback();
    ensureLinearTimeFallback();
    expect(linearTimeFallbackEnabled()).toBe(true);
  });

  it.each([
    ['(a+)+$', 'a'.repeat(40) + '!'],
    ['(x+x+)+y', 'x'.repeat(40)],
    ['(a|a)*b', 'a'.repeat(40)],
    ['(a|aa)+$', 'a'.repeat(60) + '!'],
    ['((a|b|ab)*)*c', 'ab'.repeat(30)],
    ['(?:a|b|ab)+c', 'ab'.repeat(40)],
    ['^(([a-z])+.)+[A-Z]([a-z])+$', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'],
    ['(\\w+\\s?)+$', 'word '.repeat(20) + '!'],
    ['(?i)(k|K)+$', 'k'.repeat(40) + '!'],
    ['(.*a){12}', 'a'.repeat(40)],
    ['^(\\d+)*$', '1'.repeat(40) + 'x'],
    ['(?m)^(a+)+$', 'a'.repeat(40) + '!\r'],
  ])('runs %s on a hostile input in under 100 ms per match', (pattern, input) => {
    const re = compileRegex(pattern);
    expect(bestMs(() => re.exec(input))).toBeLessThan(100);
    expect(bestMs(() => re.test(input))).toBeLessThan(100);
    expect(bestMs(() => re.findAll(input))).toBeLessThan(100 * (input.length + 1));
  });
});
