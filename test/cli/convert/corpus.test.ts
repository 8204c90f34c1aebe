import { mkdtempSync, readdirSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/run-cli.js';

/**
 * Real-world-shaped configs in both input formats (after the reference's and Promtail's documented
 * examples): each converts to exactly its expected config and warnings, and what it converts to
 * passes `rivulet validate`.
 */
const FIXTURES = 'test/fixtures/convert';
const dir = mkdtempSync(join(tmpdir(), 'rivulet-convert-corpus-'));

for (const from of ['promtail', 'alloy'] as const) {
  const inputs = readdirSync(join(FIXTURES, from)).filter((f) => f.endsWith(from === 'alloy' ? '.alloy' : '.yaml'));

  describe(`convert --from ${from}: the corpus`, () => {
    it('holds the configs it was written with', () => {
      expect(inputs.length).toBeGreaterThanOrEqual(from === 'promtail' ? 12 : 4);
    });

    for (const input of inputs) {
      it(`converts ${input} to a config that validate accepts`, async () => {
        const name = input.replace(/\.[^.]+$/, '');
        const file = join(FIXTURES, from, input);
        const expectedStderr = join(FIXTURES, from, 'expected', `${name}.stderr`);
        const converted = await runCli(['convert', '--from', from, file]);
        expect(converted.stdout).toBe(readFileSync(join(FIXTURES, from, 'expected', `${name}.alloy`), 'utf8'));
        expect(converted.stderr).toBe(existsSync(expectedStderr) ? readFileSync(expectedStderr, 'utf8') : '');
        expect(converted.code).toBe(0);

        const output = join(dir, `${from}-${name}.alloy`);
        writeFileSync(output, converted.stdout);
        expect(await runCli(['validate', output])).toEqual({ code: 0, stdout: '', stderr: '' });
        // A converted config has nothing left to convert.
        if (from === 'alloy')
          expect(await runCli(['convert', '--from', 'alloy', output])).toEqual({ code: 0, stdout: converted.stdout, stderr: '' });
      });
    }
  });
}
