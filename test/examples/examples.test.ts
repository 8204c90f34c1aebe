import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../cli/main.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const examples = readdirSync(join(root, 'examples'), { recursive: true, encoding: 'utf8' })
  // `*.test.alloy` files are config tests (run by their own command), not configs; the README
  // transcript's broken.alloy is wrong on purpose (test/docs/transcript.test.ts checks its errors).
  .filter((name) => name.endsWith('.alloy') && !name.endsWith('.test.alloy') && name.split('\\').join('/') !== 'transcript/broken.alloy')
  .map((name) => `examples/${name.split('\\').join('/')}`)
  .sort();

/** `rivulet validate FILE` with captured streams. */
async function validate(file: string) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const code = await main(['validate', join(root, file)], { stdin: Readable.from([]), stdout, stderr });
  return { code, stdout: out, stderr: err };
}

describe('examples/', () => {
  it('has a config per source and per sink', () => {
    for (const name of ['logs.source.api', 'logs.source.file', 'logs.source.stdin', 'logs.source.jetstream', 'profiles.receive_http'])
      expect(examples).toContain(`examples/sources/${name}.alloy`);
    for (const name of ['logs.write', 'logs.echo', 'logs.write.jetstream', 'profiles.write', 'profiles.echo'])
      expect(examples).toContain(`examples/sinks/${name}.alloy`);
  });

  // The JetStream deployment examples read their URLs from the environment.
  beforeAll(() => {
    vi.stubEnv('NATS_URL', 'nats://localhost:4222');
    vi.stubEnv('LOKI_URL', 'http://localhost:3100/loki/api/v1/push');
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });

  for (const file of examples) {
    it(`${file} passes rivulet validate`, async () => {
      expect(await validate(file)).toEqual({ code: 0, stdout: '', stderr: '' });
    });
  }
});
