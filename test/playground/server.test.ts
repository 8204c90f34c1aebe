import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BlockHelp, RunResult, SamplesResult, StagesResult } from '../../playground/api.js';
import type { Assets } from '../../playground/assets.js';
import { startPlaygroundServer, type PlaygroundServer } from '../../playground/server.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-playground-server-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const assets: Assets = new Map([
  ['/index.html', { body: '<!doctype html><title>t</title>', type: 'text/html; charset=utf-8' }],
  ['/assets/app-1.js', { body: 'console.log(1)', type: 'text/javascript; charset=utf-8' }],
]);

let server: PlaygroundServer;
beforeEach(async () => {
  server = await startPlaygroundServer({ port: 0, assets, databaseDir: dir });
});
afterEach(() => server.close());

const post = (path: string, body: unknown, headers: Record<string, string> = { 'Content-Type': 'application/json' }) =>
  fetch(server.url + path, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });

describe('the playground server', () => {
  it('listens on 127.0.0.1 and serves the UI', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const page = await fetch(server.url + '/');
    expect([page.status, page.headers.get('content-type'), await page.text()]).toEqual([
      200,
      'text/html; charset=utf-8',
      '<!doctype html><title>t</title>',
    ]);
    const script = await fetch(server.url + '/assets/app-1.js');
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(server.url + '/missing.js')).status).toBe(404);
  });

  it('describes every registered stage with its fields for completion and hover', async () => {
    const { stages } = (await (await fetch(server.url + '/api/stages')).json()) as StagesResult;
    const byName = new Map(stages.map((s: BlockHelp) => [s.name, s]));
    expect(byName.get('stage.multiline')!.fields).toEqual([
      { name: 'firstline', type: 'string', doc: 'RE2 expression that identifies the first line of a block.', required: true },
      {
        name: 'max_lines',
        type: 'int',
        doc: 'Maximum lines per block; a full block is sent on and a new one starts. 0 means no limit.',
        required: false,
        default: '128',
      },
      {
        name: 'max_wait_time',
        type: 'duration',
        doc: 'A block whose stream gets no line for this long is sent on.',
        required: false,
        default: '"3s"',
      },
      {
        name: 'trim_newlines',
        type: 'bool',
        doc: 'Removes trailing `\\r` and `\\n` from each line before joining.',
        required: false,
        default: 'true',
      },
    ]);
    expect(byName.get('stage.match')!.stages).toBe(true);
    expect(byName.get('stage.metrics')!.blocks.map((b) => [b.name, b.multiple])).toEqual([
      ['metric.counter', true],
      ['metric.gauge', true],
      ['metric.histogram', true],
    ]);
  });

  it('lists the samples with the generated database path filled in', async () => {
    const { samples } = (await (await fetch(server.url + '/api/samples')).json()) as SamplesResult;
    expect(samples.find((s) => s.id === 'nginx-geoip')!.config).toContain(join(dir, 'GeoIP2-City-sample.mmdb'));
  });

  it('runs a config over input and answers with entries, traces, metrics and errors', async () => {
    const response = await post('/api/run', {
      config: 'stage.static_labels {\n  values = { env = "dev" }\n}\n',
      input: 'hello\n',
      inputFormat: 'text',
      now: '2024-05-01T00:00:00Z',
    });
    expect(response.status).toBe(200);
    const result = (await response.json()) as RunResult;
    expect(result.entries).toEqual([
      { labels: { env: 'dev' }, line: 'hello', timestamp: '2024-05-01T00:00:00.000000000Z', structured_metadata: {}, extracted: {} },
    ]);
    expect(result.traces[0]!.steps[0]!.changes).toEqual(['labels +env="dev"']);
    expect(result.errors).toEqual([]);
  });

  it('answers config errors with their positions', async () => {
    const result = (await (await post('/api/check', { config: 'stage.nope {}\n' })).json()) as { errors: unknown };
    expect(result.errors).toEqual([{ line: 1, col: 1, message: 'unrecognized block name "stage.nope"' }]);
  });

  it('exports a complete logs.process block', async () => {
    const result = (await (await post('/api/export', { config: 'stage.decolorize {}\n' })).json()) as { config: string };
    expect(result.config).toBe(
      'logs.process "default" {\n  stage.decolorize {}\n\n  // Where the processed entries go: replace with the receivers of your config.\n  forward_to = [loki.write.default.receiver]\n}\n',
    );
  });

  it('rejects malformed requests with a message', async () => {
    const cases: Array<[unknown, number, string]> = [
      [{ config: 1, input: '' }, 400, 'config must be a string'],
      [{ config: '', input: '', inputFormat: 'csv' }, 400, 'inputFormat must be "jsonl" or "text"'],
      [
        { config: '', input: '', now: 'soon' },
        400,
        'now: parsing time "soon" as "2006-01-02T15:04:05Z07:00": cannot parse "soon" as "2006"',
      ],
      [{ config: '', input: '', seed: 1.5 }, 400, 'seed must be an integer'],
      ['[1]', 400, 'expected a JSON object'],
    ];
    for (const [body, status, error] of cases) {
      const response = await post('/api/run', body);
      expect([response.status, await response.json()]).toEqual([status, { error }]);
    }
  });

  it('accepts only JSON bodies, so other sites cannot post to it without asking first', async () => {
    const response = await post('/api/run', '{"config":"","input":""}', { 'Content-Type': 'text/plain' });
    expect([response.status, await response.json()]).toEqual([415, { error: 'expected a JSON body (Content-Type: application/json)' }]);
  });

  it('refuses requests for another host name (DNS rebinding)', async () => {
    const { port } = new URL(server.url);
    const status = await new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/api/samples', headers: { Host: `evil.example:${port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      })
        .on('error', reject)
        .end();
    });
    expect(status).toBe(421);
  });
});
