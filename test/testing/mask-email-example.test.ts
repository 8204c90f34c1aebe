/**
 * The worked example of docs/custom-stages.md: a custom `stage.mask_email`
 * (examples/custom-stages/mask_email.ts) registered, used from config files through the CLI
 * (with `--stages` and with a `stages.import` block), from the programmatic API and the
 * playground, and property-tested with the testing kit.
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { playgroundCommand } from '../../cli/playground.js';
import { runCommand } from '../../cli/run.js';
import { pipeline } from '../../core/pipeline.js';
import { unregisterStage } from '../../core/stage.js';
import { loadStageModules } from '../../core/stage-modules.js';
import {
  configErrorsArePositioned,
  doesNotTouch,
  entryStream,
  idempotent,
  neverAddsEntries,
  outputWithinBounds,
  plainText,
  preservesOrder,
  stageCompliance,
} from '../../testing/index.js';
import type { RunResult, StagesResult } from '../../playground/api.js';
import { startPlaygroundServer } from '../../playground/server.js';
import { runCli } from '../support/run-cli.js';
import { emailAddresses, maskEmail, maskEmails, type MaskEmailConfig } from '../../examples/custom-stages/mask_email.js';

// Paths as a user types them, relative to the working directory (the repository root).
const MODULE = 'examples/custom-stages/mask_email.ts';
const CONFIG_WITH_IMPORT = 'examples/custom-stages/pipeline.alloy';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-mask-email-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const NOW = ['--now', '2024-01-01T00:00:00Z'];
const INPUT =
  '{"line":"login by alice@example.com from bob.smith+x@mail.example.org","labels":{"app":"api"},"timestamp":"2024-01-01T00:00:00Z"}\n';
const linesOf = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).line);

describe('stage.mask_email', () => {
  it('masks every address, keeping the domain when asked', () => {
    expect(maskEmails('a@b.io, c.d@e.example.com; not@home', '***', false)).toBe('***, ***; not@home');
    expect(maskEmails('a@b.io, c.d@e.example.com', '<hidden>', true)).toBe('<hidden>@b.io, <hidden>@e.example.com');
  });

  it('works in a programmatic pipeline', async () => {
    const entries = [{ labels: {}, line: 'to x@y.org', timestamp: 0n, structuredMetadata: [], extracted: {} }];
    const out = await lastValueFrom(from(entries).pipe(pipeline([maskEmail({ keep_domain: true })]), toArray()));
    expect(out.map((e) => e.line)).toEqual(['to ***@y.org']);
  });

  describe('from a config file, through the CLI', () => {
    // Importing the example above registered the stage: start each command without it, so
    // only the command's own loading can make `stage.mask_email` known.
    beforeEach(() => unregisterStage('mask_email'));

    it('is loaded with --stages', async () => {
      const config = file('flag.alloy', 'stage.mask_email { }\n');
      const result = await runCli(['process', '--config', config, '--stages', MODULE, ...NOW], INPUT);
      expect([result.code, result.stderr, linesOf(result.stdout)]).toEqual([0, '', ['login by *** from ***']]);
    });

    it('is loaded with a stages.import block, its path relative to the config file', async () => {
      const result = await runCli(['process', '--config', CONFIG_WITH_IMPORT, ...NOW], INPUT);
      expect([result.code, result.stderr, linesOf(result.stdout)]).toEqual([0, '', ['login by ***@example.com from ***@mail.example.org']]);
    });

    it('is loaded by a stages.import block inside a run config too', async () => {
      const config = file(
        'validate.alloy',
        `stages.import "mask" {\n  path = ${JSON.stringify(relative(dir, MODULE))}\n}\nlogs.process "p" {\n  stage.mask_email { }\n  forward_to = [logs.echo.out.receiver]\n}\nlogs.echo "out" { }\n`,
      );
      expect(await runCli(['validate', config])).toEqual({ code: 0, stdout: '', stderr: '' });
    });

    it('reports its config errors at the attribute, like a built-in stage', async () => {
      const config = file('bad.alloy', 'logs.process "p" {\n  stage.mask_email {\n    mask = "x@y"\n  }\n  forward_to = []\n}\n');
      const result = await runCli(['validate', config, '--stages', MODULE]);
      expect(result).toEqual({
        code: 2,
        stdout: '',
        stderr: `${config}:3:5: logs.process "p" > stage.mask_email: mask must not contain "@", got "x@y"\n`,
      });
    });

    it('exits 2 naming a --stages module that does not load', async () => {
      const result = await runCli(['process', '--config', CONFIG_WITH_IMPORT, '--stages', 'examples/custom-stages/missing.ts']);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe('rivulet process: open examples/custom-stages/missing.ts: no such file or directory\n');
    });

    it('runs in `rivulet run` and keeps running across a reload', async () => {
      const input = file('input.log', 'mail carol@example.net\n');
      const config = file(
        'run.alloy',
        `stages.import "mask" { path = ${JSON.stringify(relative(dir, MODULE))} }\nlogs.source.file "in" {\n  path = ${JSON.stringify(input)}\n  forward_to = [logs.process.p.receiver]\n}\nlogs.process "p" {\n  stage.mask_email { keep_domain = true }\n  forward_to = [logs.echo.out.receiver]\n}\nlogs.echo "out" { }\n`,
      );
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      let out = '';
      let err = '';
      stdout.on('data', (c) => (out += c));
      const listening = new Promise<string>((resolve) =>
        stderr.on('data', (c) => {
          err += c;
          const m = /addr="([^"]+)"/.exec(err);
          if (m) resolve(m[1]!);
        }),
      );
      const signals = new EventEmitter();
      const done = runCommand([config, '--server.http.listen-addr', '127.0.0.1:0'], { stdin: Readable.from([]), stdout, stderr }, signals);
      const url = await listening;
      for (let i = 0; i < 100 && !out.includes('\n'); i++) await new Promise((r) => setTimeout(r, 20));
      expect((await fetch(`${url}/-/reload`, { method: 'POST', headers: { 'X-Rivulet-Reload': '1' } })).status).toBe(200);
      signals.emit('SIGTERM');
      expect(await done).toBe(0);
      expect(linesOf(out)).toEqual(['mail ***@example.net']);
    });
  });

  describe('in the playground', () => {
    const assets = new Map([['/index.html', { body: '<!doctype html>', type: 'text/html; charset=utf-8' }]]);
    beforeEach(() => unregisterStage('mask_email'));

    it('stops `rivulet playground` before serving anything when a --stages module does not load', async () => {
      const result = await runCli(['playground', '--port', '0', '--stages', 'examples/custom-stages/missing.ts']);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe('rivulet playground: open examples/custom-stages/missing.ts: no such file or directory\n');
    });

    it('is offered by `rivulet playground --stages`', async () => {
      const stdout = new PassThrough();
      const listening = new Promise<string>((resolve) => stdout.on('data', (c) => resolve(/listening on (\S+)/.exec(String(c))![1]!)));
      const signals = new EventEmitter();
      const io = { stdin: Readable.from([]), stdout, stderr: new PassThrough() };
      const done = playgroundCommand(['--port', '0', '--stages', MODULE], io, signals, (options) =>
        startPlaygroundServer({ ...options, assets, databaseDir: dir }),
      );
      const url = await listening;
      const { stages } = (await (await fetch(`${url}/api/stages`)).json()) as StagesResult;
      signals.emit('SIGTERM');
      expect(await done).toBe(0);
      expect(stages.find((s) => s.name === 'stage.mask_email')?.fields.map((f) => f.name)).toEqual(['source', 'mask', 'keep_domain']);
    });

    it('is run by the playground API once loadStageModules has loaded it', async () => {
      await loadStageModules([MODULE], process.cwd());
      const server = await startPlaygroundServer({ port: 0, assets, databaseDir: dir });
      try {
        const { stages } = (await (await fetch(`${server.url}/api/stages`)).json()) as StagesResult;
        expect(stages.find((s) => s.name === 'stage.mask_email')?.doc).toBe(
          'Replaces e-mail addresses in the line, or in an extracted value, with a mask.',
        );
        const response = await fetch(`${server.url}/api/run`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({
            config: 'stage.mask_email { mask = "[email]" }',
            input: 'from dan@example.com',
            inputFormat: 'text',
            now: '2024-01-01T00:00:00Z',
          }),
        });
        const result = (await response.json()) as RunResult;
        expect([result.errors, result.entries.map((e) => e.line)]).toEqual([[], ['from [email]']]);
      } finally {
        await server.close();
      }
    });
  });

  describe('properties, with the testing kit', () => {
    beforeAll(() => loadStageModules([MODULE], process.cwd()));
    const address = fc.emailAddress();
    const mailLines = entryStream({
      line: fc.tuple(plainText, address, plainText, fc.option(address, { nil: '' })).map((parts) => parts.join(' ')),
    });
    const configs = fc.record({ keep_domain: fc.boolean(), mask: fc.constantFrom('***', 'x', '[email]') });

    for (const check of stageCompliance(maskEmail, { configs: [{}, { keep_domain: true }, { source: 'user' }], numRuns: 15 }))
      it(check.name, check.run);

    it('never adds entries and keeps each stream in order', () => {
      neverAddsEntries(maskEmail, configs, { inputs: mailLines });
      preservesOrder(maskEmail, configs, { inputs: mailLines });
    });

    it('leaves no address behind but the masked ones', () => {
      // With keep_domain a mask such as "x" turns an address into another one: x@domain.
      outputWithinBounds(
        maskEmail,
        configs,
        (out, _input, config) => {
          const unmasked = emailAddresses(out.line).filter((address) => !address.startsWith(`${(config as MaskEmailConfig).mask}@`));
          return unmasked.length === 0 || `address left unmasked: ${unmasked.join(', ')}`;
        },
        { inputs: mailLines },
      );
    });

    it('gives the same text when masking twice', () => {
      idempotent(maskEmail, configs, { inputs: mailLines });
    });

    it('touches only the line, or only the extracted value it is given', () => {
      doesNotTouch(maskEmail, configs, ['labels', 'timestamp', 'structuredMetadata', 'extracted'], { inputs: mailLines });
      doesNotTouch(maskEmail, { source: 'user' }, ['labels', 'line', 'timestamp', 'structuredMetadata'], { inputs: mailLines });
    });

    it('rejects a mask holding "@" and an empty source with positioned errors', () => {
      configErrorsArePositioned(maskEmail, { invalid: ['stage.mask_email {\n  mask = "a@b"\n}', 'stage.mask_email { source = "" }'] });
    });
  });
});
