import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The package as a user gets it: `npm pack` of the built tree, the tarball installed into a new
 * project, and there plain Node (no TypeScript loader), a strict `nodenext` type-check, the
 * installed bin and the playground in Debian's chromium.
 *
 * The install takes packages from npm's cache (`npm ci` filled it) where it can, with install scripts off, and the `re2`
 * addon already built for this checkout is copied in, so nothing is compiled or downloaded again.
 */
const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

const work = mkdtempSync(join(tmpdir(), 'rivulet-package-'));
const consumer = join(work, 'consumer');
const bin = join(consumer, 'node_modules/.bin/rivulet');
let packed: { filename: string; files: Array<{ path: string }>; size: number; unpackedSize: number };

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist/index.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test does) first');
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: ROOT });
  packed = (JSON.parse(stdout) as (typeof packed)[])[0]!;
  mkdirSync(consumer);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const fastCheck = (JSON.parse(readFileSync(join(ROOT, 'node_modules/fast-check/package.json'), 'utf8')) as { version: string }).version;
  await run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      join(work, packed.filename),
      `fast-check@${fastCheck}`,
    ],
    {
      cwd: consumer,
      timeout: 120_000,
    },
  );
  const addon = 'node_modules/re2/build/Release/re2.node';
  mkdirSync(dirname(join(consumer, addon)), { recursive: true });
  copyFileSync(join(ROOT, addon), join(consumer, addon));
}, 180_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the packed tarball', () => {
  it('ships the build, the examples and the license, and no tests, fixtures or benches', () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths).toContain('dist/index.js');
    expect(paths).toContain('dist/types/index.d.ts');
    expect(paths).toContain('dist/bin/rivulet.js');
    expect(paths).toContain('dist/playground/web/index.html');
    expect(paths).toContain('LICENSE');
    expect(paths).toContain('examples/default.alloy');
    expect(paths.filter((p) => /^(test|bench|scripts|proto)\/|\.test\.ts$|^dist\/types\/test\//.test(p))).toEqual([]);
    expect(paths.filter((p) => /\.ts$/.test(p) && !p.endsWith('.d.ts') && !p.startsWith('examples/'))).toEqual([]);
  });
});

describe('installed into a new project', () => {
  it('runs the README programmatic example with plain node', async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const example = /## Programmatic use[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    writeFileSync(join(consumer, 'app.mjs'), example!);
    const { stdout } = await run(process.execPath, ['app.mjs'], { cwd: consumer });
    expect(stdout).toBe("{ app: 'api', env: 'prod' } hi\n");
  });

  it('type-checks a consumer under strict nodenext', async () => {
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true },
        files: ['consumer.ts'],
      }),
    );
    writeFileSync(
      join(consumer, 'consumer.ts'),
      [
        "import { from, lastValueFrom, toArray } from 'rxjs';",
        "import { pipeline, staticLabels, json, labels, type Entry } from 'rivulet';",
        "import { entry as entryArbitrary, neverAddsEntries } from 'rivulet/testing';",
        '',
        'const entry: Entry = { labels: { app: \'api\' }, line: \'{"level":"info"}\', timestamp: 1n, structuredMetadata: [], extracted: {} };',
        "const out: Entry[] = await lastValueFrom(from([entry]).pipe(pipeline([json({ expressions: { level: '' } }), labels({ values: { level: '' } }), staticLabels({ values: { env: 'prod' } })]), toArray()));",
        'const level: string | undefined = out[0]?.labels.level;',
        'export { level, entryArbitrary, neverAddsEntries };',
        '',
      ].join('\n'),
    );
    const result = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: consumer }).catch((err: { stdout: string }) => err);
    expect(result.stdout).toBe('');
  }, 60_000);

  it('runs the installed bin: process on a sample, and --version', async () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect((await run(bin, ['--version'], { cwd: consumer })).stdout).toBe(`rivulet ${version}\n`);
    writeFileSync(
      join(consumer, 'stages.alloy'),
      'stage.logfmt {\n  mapping = { level = "" }\n}\nstage.labels {\n  values = { level = "" }\n}\n',
    );
    const child = execFile(bin, ['process', '--config', 'stages.alloy', '--input', 'text', '--now', '2024-01-01T00:00:00Z'], {
      cwd: consumer,
    });
    child.stdin!.end('level=warn msg=disk\n');
    const stdout = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout!.on('data', (d: Buffer) => (text += d));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`exit ${code}`))));
    });
    expect(JSON.parse(stdout)).toEqual({
      labels: { level: 'warn' },
      line: 'level=warn msg=disk',
      timestamp: '2024-01-01T00:00:00.000000000Z',
      structured_metadata: {},
      extracted: { level: 'warn' },
    });
  });

  it('loads a .mjs custom stage module with plain node, and says in one line what a .ts one needs', async () => {
    const stage = [
      "import { defineStage, t } from 'rivulet';",
      'export const shout = defineStage({',
      "  name: 'shout',",
      "  doc: 'Upper-cases the line.',",
      '  fields: {},',
      "  build: () => ({ kind: 'map', process: (entry) => ({ ...entry, line: entry.line.toUpperCase() }) }),",
      '});',
      '',
    ].join('\n');
    writeFileSync(join(consumer, 'shout.mjs'), stage);
    writeFileSync(join(consumer, 'shout.ts'), stage);
    writeFileSync(join(consumer, 'shout.alloy'), 'stage.shout { }\n');
    const args = ['process', '--config', 'shout.alloy', '--input', 'text', '--output', 'line', '--now', '2024-01-01T00:00:00Z'];
    const child = execFile(bin, [...args, '--stages', './shout.mjs'], { cwd: consumer });
    child.stdin!.end('quiet please\n');
    const out = await new Promise<string>((resolve) => {
      let text = '';
      child.stdout!.on('data', (d: Buffer) => (text += d));
      child.on('close', () => resolve(text));
    });
    expect(out).toBe('QUIET PLEASE\n');
    const failed = await run(bin, [...args, '--stages', './shout.ts'], { cwd: consumer }).catch(
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed).toMatchObject({
      code: 2,
      stderr:
        'rivulet: stage module "./shout.ts": is TypeScript, which needs tsx to load: npm install tsx (or compile the module to .js)\n',
    });
  });

  it('serves the playground from the installed package, and chromium runs a sample in it', async () => {
    const child: ChildProcess = spawn(bin, ['playground', '--port', '0'], { cwd: consumer, stdio: ['ignore', 'pipe', 'pipe'] });
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stdout!.on('data', (d: Buffer) => {
          text += d;
          const found = /listening on (http:\/\/\S+)/.exec(text);
          if (found) resolve(found[1]!);
        });
        child.on('exit', (code) => reject(new Error(`playground exited with ${code}`)));
      });
      const page = await browser.newPage();
      await page.goto(url);
      await page.waitForSelector('body[data-ready="true"]');
      await page.selectOption('#sample', 'logfmt');
      await page.click('#run');
      await page.waitForFunction(() => document.querySelectorAll('#output tbody tr').length > 0);
      const firstRow = await page.$eval('#output tbody tr', (row) => row.textContent ?? '');
      expect(firstRow).toContain('level');
    } finally {
      await browser.close();
      child.kill('SIGTERM');
    }
  }, 60_000);
});
