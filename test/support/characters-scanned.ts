import { vi } from 'vitest';

/**
 * Characters that `indexOf` and `split` looked at, in strings of at least 1 KiB, while `run` ran:
 * a work count that tells a line splitter linear in a line's length from one that searches the
 * whole unfinished line again for every piece that arrives. Shorter strings are other code's
 * business and cannot make a long line slow.
 */
export async function charactersScanned(run: () => unknown): Promise<number> {
  const indexOf = vi.spyOn(String.prototype, 'indexOf');
  const split = vi.spyOn(String.prototype, 'split');
  try {
    await run();
    let scanned = 0;
    indexOf.mock.calls.forEach((call, i) => {
      const text = String(indexOf.mock.contexts[i]);
      if (text.length >= 1024) scanned += text.length - Math.max(0, Number(call[1] ?? 0));
    });
    for (const context of split.mock.contexts) {
      const text = String(context);
      if (text.length >= 1024) scanned += text.length;
    }
    return scanned;
  } finally {
    indexOf.mockRestore();
    split.mockRestore();
  }
}
