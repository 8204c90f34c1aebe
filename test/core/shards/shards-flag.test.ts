import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../cli/args.js';
import { runCommand } from '../../../cli/run.js';
import { shardCount } from '../../../cli/shards-flag.js';
import { layerOf, layerViolations } from '../../support/import-graph.js';
import '../../../index.js';

describe('--shards', () => {
  it('takes a whole number from 1 to 256, and 1 without the flag', () => {
    expect(shardCount(undefined, undefined)).toBe(1);
    expect(shardCount('1', undefined)).toBe(1);
    expect(shardCount('256', '1')).toBe(256);
    for (const bad of ['0', '257', '2.5', 'two', true] as const) {
      expect(() => shardCount(bad, undefined)).toThrow(
        new UsageError(`--shards must be a whole number from 1 to 256, got ${JSON.stringify(bad)}`),
      );
    }
  });

  it('is refused beside --workers above 1', () => {
    for (const shards of ['1', '2']) {
      expect(() => shardCount(shards, '2')).toThrow(
        new UsageError('--shards cannot be combined with --workers above 1: each shard runs its stages on its own thread'),
      );
    }
  });

  it('refuses a component the shards do not run yet as a config error at its block', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-shards-flag-'));
    const file = join(dir, 'run.alloy');
    writeFileSync(
      file,
      `logs.source.stdin "tail" {
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }
`,
    );
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const code = await runCommand([file, '--server.http.listen-addr', '127.0.0.1:0', '--shards', '2'], {
      stdin: new PassThrough(),
      stdout: new PassThrough(),
      stderr,
    });
    expect(code).toBe(2);
    expect(err).toBe(
      `${file}:1:1: logs.source.stdin "tail": logs.source.stdin does not run sharded yet; --shards takes logs.source.api, logs.source.jetstream, logs.source.file sources and the logs components they forward to\n`,
    );
  });

  it('is a room of core/ above the components, which the kernel may not import', () => {
    expect(layerOf('core/shards/sharded-run.ts')).toBe('core/shards');
    const graph = new Map([
      ['core/shards/shard.ts', ['core/components/logs-process.ts', 'core/threads/entry-batch-codec.ts', 'core/inspect/tap.ts']],
      ['core/runtime/graph.ts', ['core/shards/shard.ts']],
      ['core/components/logs-processor.ts', ['core/shards/shard.ts']],
    ]);
    expect(layerViolations(graph)).toEqual([
      'core/components/logs-processor.ts -> core/shards/shard.ts (core/components may not import core/shards)',
      'core/runtime/graph.ts -> core/shards/shard.ts (core may not import core/shards)',
    ]);
  });
});
