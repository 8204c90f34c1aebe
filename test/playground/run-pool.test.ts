import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../index.js';
import { unregisterStage } from '../../core/stage.js';
import { loadStageModules } from '../../core/stage-modules.js';
import type { RunRequest } from '../../playground/api.js';
import { RunAbortedError, RunPool } from '../../playground/run-pool.js';

const spin: RunRequest = { config: 'stage.test_spin {}', input: 'x\n', inputFormat: 'text', now: '2024-05-01T00:00:00Z' };
const quick: RunRequest = { ...spin, config: 'stage.decolorize {}' };

let pool: RunPool;
beforeAll(async () => {
  await loadStageModules(['test/fixtures/playground/runaway-stages.ts'], process.cwd());
  pool = new RunPool({ limits: { timeoutMs: 4000 }, maxWorkers: 1 });
  // Loads the stages into the one worker, so the timings below are the jobs' own.
  expect((await pool.run(quick)).entries.map((e) => e.line)).toEqual(['x']);
}, 60_000);
afterAll(async () => {
  await pool.close();
  unregisterStage('test_spin');
  unregisterStage('test_hoard');
});

describe('RunPool', () => {
  it('ends a job, and frees its worker, when its client goes away', async () => {
    const running = new AbortController();
    const waiting = new AbortController();
    const first = pool.run(spin, running.signal);
    // With one worker, the second job waits for it.
    const second = pool.run(quick, waiting.signal);
    await new Promise((r) => setTimeout(r, 500));
    waiting.abort();
    await expect(second).rejects.toThrow(RunAbortedError);
    const aborted = performance.now();
    running.abort();
    await expect(first).rejects.toThrow(RunAbortedError);
    expect(performance.now() - aborted).toBeLessThan(1000);
    // The next job gets a new worker at once instead of waiting out the time limit.
    expect((await pool.run(quick)).errors).toEqual([]);
  }, 60_000);

  it('stops a job at its time limit and says so', async () => {
    const result = await pool.run(spin);
    expect(result.errors).toEqual([{ line: 0, col: 0, message: 'run stopped: took longer than 4 s' }]);
    expect(await pool.check('stage.nope {}')).toHaveLength(1);
  }, 60_000);
});
