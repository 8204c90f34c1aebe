import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../cli/main.js';
import '../../index.js';
import type { Sample } from '../../playground/api.js';
import { runPlayground, seededRandom } from '../../playground/run.js';
import { prepareSamples, SAMPLES } from '../../playground/samples/index.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-playground-samples-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

// Run as the server runs them: sandboxed, with only the sample database readable.
const { samples: library, files } = prepareSamples(dir);
const access = { readableFiles: files };

/** `rivulet process --config FILE --input FORMAT --now NOW` on the sample's input. */
async function processWithCli(sample: Sample): Promise<{ code: number; stdout: string; stderr: string }> {
  const config = join(dir, `${sample.id}.alloy`);
  writeFileSync(config, sample.config);
  // The CLI has no seed flag: give it the same random source the playground uses for the seed.
  if (sample.seed !== undefined) vi.spyOn(Math, 'random').mockImplementation(seededRandom(sample.seed));
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const code = await main(['process', '--config', config, '--input', sample.inputFormat, '--now', sample.now], {
    stdin: Readable.from([sample.input]),
    stdout,
    stderr,
  });
  return { code, stdout: out, stderr: err };
}

describe('the sample library', () => {
  it('covers the formats people bring', () => {
    expect(SAMPLES.map((s) => s.id)).toEqual([
      'kubernetes',
      'docker',
      'cri',
      'logfmt',
      'nginx-geoip',
      'java-multiline',
      'host-events',
      'luhn',
      'retention',
    ]);
    expect(new Set(SAMPLES.map((s) => s.id)).size).toBe(SAMPLES.length);
  });

  it('puts the generated GeoIP database into the configs that use it', () => {
    const nginx = library.find((s) => s.id === 'nginx-geoip')!;
    expect(nginx.config).toContain(`db      = "${join(dir, 'GeoIP2-City-sample.mmdb')}"`);
    expect(library.every((s) => !s.config.includes('{{'))).toBe(true);
  });

  for (const sample of library) {
    it(`runs ${sample.id} without errors and forwards exactly what rivulet process prints`, async () => {
      const result = await runPlayground(
        {
          config: sample.config,
          input: sample.input,
          inputFormat: sample.inputFormat,
          now: sample.now,
          ...(sample.seed !== undefined ? { seed: sample.seed } : {}),
        },
        access,
      );
      expect(result.errors).toEqual([]);
      expect(result.inputErrors).toEqual([]);
      expect(result.entries.length).toBeGreaterThan(0);
      const cli = await processWithCli(sample);
      expect(cli.stderr).toBe('');
      expect(cli.code).toBe(0);
      const expected = cli.stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as unknown);
      expect(result.entries).toEqual(expected);
    });
  }

  it('shows something beyond pass-through in every sample: a change, a drop or a flush', async () => {
    for (const sample of library) {
      const result = await runPlayground(
        {
          config: sample.config,
          input: sample.input,
          inputFormat: sample.inputFormat,
          now: sample.now,
          ...(sample.seed !== undefined ? { seed: sample.seed } : {}),
        },
        access,
      );
      const outcomes = new Set(result.traces.flatMap((t) => t.steps.map((s) => s.outcome)));
      expect(outcomes.has('changed') || outcomes.has('dropped') || outcomes.has('released'), sample.id).toBe(true);
    }
  });

  it('exercises the time-based and routing views: an idle flush, joined lines, match branches, drops and custom metrics', async () => {
    const run = (id: string) => {
      const s = library.find((x) => x.id === id)!;
      return runPlayground(
        {
          config: s.config,
          input: s.input,
          inputFormat: s.inputFormat,
          now: s.now,
          ...(s.seed !== undefined ? { seed: s.seed } : {}),
        },
        access,
      );
    };
    const java = await run('java-multiline');
    expect(java.flushes[0]).toMatchObject({ atMs: 3003, trigger: { kind: 'timer' } });
    const cri = await run('cri');
    expect(cri.traces.filter((t) => t.fate.kind === 'merged')).toHaveLength(2);
    const k8s = await run('kubernetes');
    expect(k8s.traces[2]!.steps.map((s) => s.outcome)).toContain('matched');
    const retention = await run('retention');
    expect(retention.traces[0]!.fate).toMatchObject({
      kind: 'dropped',
      reason: 'every condition held: the timestamp is older than 1h0m0s before now (counted as reason "too_old")',
    });
    const nginx = await run('nginx-geoip');
    expect(nginx.metrics).toContain('logs_process_custom_http_requests_total{country="GB",method="GET",status="200"} 1');
    expect(nginx.entries[0]!.structured_metadata).toEqual({ city: 'London' });
  });
});
