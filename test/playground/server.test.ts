import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unregisterStage } from '../../core/stage.js';
import { loadStageModules } from '../../core/stage-modules.js';
import type { BlockHelp, RunRequest, RunResult, SamplesResult, StagesResult } from '../../playground/api.js';
import type { Assets } from '../../playground/assets.js';
import { startPlaygroundServer, type PlaygroundServer, type PlaygroundServerOptions } from '../../playground/server.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-playground-server-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const assets: Assets = new Map([
  ['/index.html', { body: '<!doctype html><title>t</title>', type: 'text/html; charset=utf-8' }],
  ['/assets/app-1.js', { body: 'console.log(1)', type: 'text/javascript; charset=utf-8' }],
]);

// One server for the file: the routes keep no state between requests.
let server: PlaygroundServer;
beforeAll(async () => {
  server = await startPlaygroundServer({ port: 0, assets, databaseDir: dir });
});
afterAll(() => server.close());

const post = (path: string, body: unknown, headers: Record<string, string> = { 'Content-Type': 'application/json' }, on = server) =>
  fetch(on.url + path, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

function securityHeadersOf(headers: Headers | Record<string, unknown>): Record<string, unknown> {
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : headers[name]);
  return Object.fromEntries(Object.keys(SECURITY_HEADERS).map((name) => [name, get(name)]));
}

/** A server of its own for a test, closed after it. */
async function withServer<T>(options: PlaygroundServerOptions, test: (server: PlaygroundServer) => Promise<T>): Promise<T> {
  const own = await startPlaygroundServer({ port: 0, assets, databaseDir: dir, ...options });
  try {
    return await test(own);
  } finally {
    await own.close();
  }
}

async function run(on: PlaygroundServer, request: RunRequest): Promise<RunResult> {
  const response = await post('/api/run', request, undefined, on);
  expect(response.status).toBe(200);
  return (await response.json()) as RunResult;
}

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
      'logs.process "default" {\n  stage.decolorize {}\n\n  // Where the processed entries go: replace with the receivers of your config.\n  forward_to = [logs.write.default.receiver]\n}\n\n// Sends the processed entries to Loki: point url at your own push endpoint.\nlogs.write "default" {\n  endpoint {\n    url = "http://localhost:3100/loki/api/v1/push"\n  }\n}\n',
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
    const answer = await new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/api/samples', headers: { Host: `evil.example:${port}` } }, (res) => {
        res.resume();
        resolve({ status: res.statusCode!, headers: res.headers });
      })
        .on('error', reject)
        .end();
    });
    expect(answer.status).toBe(421);
    expect(securityHeadersOf(answer.headers)).toEqual(SECURITY_HEADERS);
  });

  it('forbids framing and loading anything from elsewhere, on every answer', async () => {
    const answers = await Promise.all([
      fetch(server.url + '/'),
      fetch(server.url + '/assets/app-1.js'),
      fetch(server.url + '/missing.js'),
      fetch(server.url + '/api/samples'),
      post('/api/run', '[1]'),
      post('/api/check', { config: 'stage.decolorize {}' }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 404, 200, 400, 200]);
    for (const answer of answers) expect(securityHeadersOf(answer.headers)).toEqual(SECURITY_HEADERS);
  });
});

describe('playground runs', () => {
  const SECRET = 'RIVULET_PLAYGROUND_SERVER_TEST';
  const envConfig = `stage.static_labels {\n  values = { secret = "[" + sys.env("${SECRET}") + "]" }\n}\n`;
  const textRun = (config: string): RunRequest => ({ config, input: 'x\n', inputFormat: 'text', now: '2024-05-01T00:00:00Z' });

  it('read no environment variable, unless the server was started with allowHostAccess', async () => {
    process.env[SECRET] = 's3cret';
    try {
      expect((await run(server, textRun(envConfig))).entries[0]!.labels).toEqual({ secret: '[]' });
      await withServer({ allowHostAccess: true }, async (open) => {
        expect((await run(open, textRun(envConfig))).entries[0]!.labels).toEqual({ secret: '[s3cret]' });
      });
    } finally {
      delete process.env[SECRET];
    }
  });

  it('read no file but the sample database', async () => {
    const { samples } = (await (await fetch(server.url + '/api/samples')).json()) as SamplesResult;
    const geoip = samples.find((s) => s.id === 'nginx-geoip')!;
    const result = await run(server, geoip);
    expect([result.errors, result.entries[0]!.structured_metadata]).toEqual([[], { city: 'London' }]);
    const other = await run(server, textRun('stage.geoip {\n  db      = "/etc/hostname"\n  source  = "ip"\n  db_type = "city"\n}\n'));
    expect(other.errors).toEqual([
      {
        line: 2,
        col: 3,
        message:
          'stage.geoip: this run may not read files such as "/etc/hostname" (start the playground with --allow-host-access to allow it)',
      },
    ]);
  });

  describe('past their limits', () => {
    beforeAll(() => loadStageModules(['test/fixtures/playground/runaway-stages.ts'], process.cwd()));
    afterAll(() => {
      unregisterStage('test_spin');
      unregisterStage('test_hoard');
    });

    it('stop after 10 s, while the server answers other requests at once', async () => {
      // A run without input loads the custom stages into a worker, so the timed run starts at once.
      expect((await run(server, { ...textRun('stage.test_spin {}'), input: '' })).errors).toEqual([]);
      const started = performance.now();
      let finished = false;
      const stopped = run(server, textRun('stage.test_spin {}')).finally(() => (finished = true));
      const stagesTimes: number[] = [];
      while (!finished) {
        await new Promise((r) => setTimeout(r, 500));
        const asked = performance.now();
        expect((await fetch(server.url + '/api/stages')).status).toBe(200);
        stagesTimes.push(performance.now() - asked);
      }
      const result = await stopped;
      const elapsed = performance.now() - started;
      expect(result.errors).toEqual([{ line: 0, col: 0, message: 'run stopped: took longer than 10 s' }]);
      expect(result.entries).toEqual([]);
      expect(elapsed).toBeGreaterThanOrEqual(10_000);
      expect(elapsed).toBeLessThan(11_500);
      expect(stagesTimes.length).toBeGreaterThan(10);
      expect(Math.max(...stagesTimes)).toBeLessThan(1000);
      // The next run gets a fresh worker.
      expect((await run(server, textRun('stage.decolorize {}'))).entries.map((e) => e.line)).toEqual(['x']);
    }, 60_000);

    it('stop when they use more memory than the limit', async () => {
      await withServer({ runLimits: { maxHeapMb: 128 } }, async (small) => {
        const result = await run(small, textRun('stage.test_hoard {}'));
        expect(result.errors).toEqual([{ line: 0, col: 0, message: 'run stopped: used more than 128 MiB' }]);
        expect((await run(small, textRun('stage.decolorize {}'))).errors).toEqual([]);
      });
    }, 60_000);
  });
});
