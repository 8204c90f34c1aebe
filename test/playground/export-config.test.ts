import { mkdtempSync, rmSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.js';
import { ComponentGraph } from '../../core/runtime/graph.js';
import { configErrorsOf } from '../../lib/config/errors.js';
import { exportConfig } from '../../playground/export-config.js';
import { sampleLibrary } from '../../playground/samples/index.js';
import '../../index.js';

const WRITER = [
  '',
  '// Sends the processed entries to Loki: point url at your own push endpoint.',
  'logs.write "default" {',
  '  endpoint {',
  '    url = "http://localhost:3100/loki/api/v1/push"',
  '  }',
  '}',
  '',
].join('\n');

const FORWARD_TO = [
  '  // Where the processed entries go: replace with the receivers of your config.',
  '  forward_to = [logs.write.default.receiver]',
].join('\n');

/** Checks a config file as `rivulet validate` checks a component graph; the errors, or none. */
async function validate(text: string): Promise<string[]> {
  const registry = new Registry();
  const graph = new ComponentGraph((id) => ({ id, clock: systemClock(), registry, stdout: new PassThrough(), log: () => {} }));
  try {
    graph.load(text, 'exported.alloy');
  } catch (err) {
    return configErrorsOf(err).map((e) => e.message);
  }
  await graph.stop();
  return [];
}

describe('exportConfig', () => {
  it('wraps bare stages in logs.process "default" sending to a logs.write block, keeping comments', () => {
    expect(exportConfig('// extract\nstage.json {\n  expressions = { a = "" }\n}\n')).toEqual({
      config: [
        'logs.process "default" {',
        '  // extract',
        '  stage.json {',
        '    expressions = { a = "" }',
        '  }',
        '',
        FORWARD_TO,
        '}',
        WRITER,
      ].join('\n'),
      errors: [],
    });
  });

  it('adds forward_to to a logs.process block that lacks one and keeps its label', () => {
    expect(exportConfig('logs.process "web" {\n  stage.json {\n    expressions = { a = "" }\n  }\n}\n').config).toBe(
      `logs.process "web" {\n  stage.json {\n    expressions = { a = "" }\n  }\n\n${FORWARD_TO}\n}\n${WRITER}`,
    );
  });

  it('fills an empty forward_to, as the samples have it', () => {
    expect(exportConfig('logs.process "web" {\n  forward_to = []\n  stage.decolorize {}\n}\n').config).toBe(
      `logs.process "web" {\n  stage.decolorize {}\n\n${FORWARD_TO}\n}\n${WRITER}`,
    );
  });

  it('keeps a forward_to that names receivers', () => {
    expect(exportConfig('logs.process "web" {\n  stage.decolorize {}\n  forward_to = [loki.write.x.receiver]\n}\n').config).toBe(
      'logs.process "web" {\n  stage.decolorize {}\n  forward_to = [loki.write.x.receiver]\n}\n',
    );
  });

  it('reports a config that does not parse', () => {
    expect(exportConfig('stage.json {\n')).toEqual({
      config: '',
      errors: [{ line: 2, col: 1, message: 'expected "}" to close block "stage.json" opened at 1:12, got end of file' }],
    });
  });
});

describe('the exported config as a whole file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-export-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const samples = sampleLibrary(dir);

  it('is checked for real: the receiver of another component name is refused', async () => {
    const errors = await validate('logs.process "default" {\n  stage.decolorize {}\n  forward_to = [loki.write.default.receiver]\n}\n');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/loki\.write/);
  });

  it.each(samples.map((s) => [s.id, s] as const))('passes rivulet validate for the %s sample', async (_id, sample) => {
    const exported = exportConfig(sample.config);
    expect(exported.errors).toEqual([]);
    expect(exported.config).toContain('forward_to = [logs.write.default.receiver]');
    expect(await validate(exported.config)).toEqual([]);
  });

  it('passes rivulet validate for bare stages', async () => {
    expect(
      await validate(
        exportConfig('stage.json {\n  expressions = { level = "" }\n}\nstage.labels {\n  values = { level = "" }\n}\n').config,
      ),
    ).toEqual([]);
  });
});
