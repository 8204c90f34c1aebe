/**
 * A shard that dies while the run goes on: the run is told (so `rivulet run` stops with exit 1
 * instead of answering every push 500), and a reload says the shards have stopped instead of
 * rejecting, which left SIGHUP's rejection unhandled.
 */
import { PassThrough } from 'node:stream';
import type { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { ShardedRun } from '../../../core/shards/sharded-run.js';
// Every built-in stage and component, as the executable registers them.
import '../../../index.js';

describe('a shard that fails while running', () => {
  it('settles failed with the reason, and a reload answers that the shards have stopped', { timeout: 60_000 }, async () => {
    const logged: string[] = [];
    const run = new ShardedRun({
      shards: 2,
      configText: 'logs.echo "out" { }\n',
      configFile: 'failure.alloy',
      log: (level, message, fields) => logged.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`),
      stdout: new PassThrough(),
    });
    await run.start();
    const threads = (run as unknown as { threads: Array<{ worker: Worker }> }).threads;
    await threads[0]!.worker.terminate();
    const failure = await run.failed;
    expect(failure.message).toMatch(/^shard [01] exited with code 1$/);
    expect(await run.reload('logs.echo "out" { }\n', [])).toEqual([`the shards have stopped: ${failure.message}`]);
    expect(logged).toContain(`error a shard failed ${JSON.stringify({ error: failure.message })}`);
    await run.stop(['logs.echo.out']);
  });
});
