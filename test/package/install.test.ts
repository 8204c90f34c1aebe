import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS } from '../support/chromium.js';
import { installedVersion, installPackedConsumer, ROOT, run, TSC, type PackedTarball } from '../support/packed-consumer.js';
import { needs, requireBinary } from '../support/system-binaries.js';

/**
 * The package as a user gets it: `npm pack` of the built tree, the tarball installed into a new
 * project with the user's own rxjs and prom-client (peer dependencies), and there plain Node (no
 * TypeScript loader), a strict `nodenext` type-check, the user's marble tests, the installed bin
 * and the playground in Debian's chromium.
 *
 * The install takes packages from npm's cache (`npm ci` filled it) where it can, with install scripts off, and the `re2`
 * addon already built for this checkout is copied in, so nothing is compiled or downloaded again.
 */
const chromiumProgram = needs('chromium');

let work: string;
let consumer: string;
let bin: string;
let packed: PackedTarball;

beforeAll(async () => {
  const installed = await installPackedConsumer(['fast-check', 'rxjs', 'prom-client']);
  ({ work, packed } = installed);
  consumer = installed.dir;
  bin = join(consumer, 'node_modules/.bin/rivulet');
}, 180_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
}, 120_000);

/** The version of a package installed in this checkout. */
const version = installedVersion;

interface NpmTree {
  readonly version?: string;
  readonly dependencies?: Record<string, NpmTree>;
}

/** Every version of `name` anywhere in an `npm ls --json` tree. */
function versionsOf(tree: NpmTree, name: string, found = new Set<string>()): Set<string> {
  for (const [dependency, subtree] of Object.entries(tree.dependencies ?? {})) {
    if (dependency === name && subtree.version) found.add(subtree.version);
    versionsOf(subtree, name, found);
  }
  return found;
}

/** The package a bare import specifier names: `@scope/name` or `name`, without a subpath. */
function packageOf(specifier: string): string {
  return specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
}

describe('the packed tarball', () => {
  it('ships the build, the examples and the license, and no tests, fixtures or benches', () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths).toContain('dist/index.js');
    expect(paths).toContain('dist/index.d.ts');
    expect(paths).toContain('dist/core/clock.js');
    expect(paths).toContain('dist/core/clock.d.ts');
    expect(paths).toContain('dist/testing/index.d.ts');
    expect(paths).toContain('dist/bin/rivulet.js');
    expect(paths).toContain('dist/core/threads/pipeline-worker.js');
    expect(paths).toContain('dist/playground/run-worker.js');
    expect(paths).toContain('dist/playground/web/index.html');
    expect(paths).toContain('LICENSE');
    expect(paths).toContain('examples/default.alloy');
    expect(paths.filter((p) => /^(test|bench|scripts|proto)\/|\.test\.ts$|^dist\/test\//.test(p))).toEqual([]);
    expect(paths.filter((p) => /\.ts$/.test(p) && !p.endsWith('.d.ts') && !p.startsWith('examples/'))).toEqual([]);
    // The bin, the CLI and the playground server are no API: their JavaScript ships, their types do not.
    expect(paths.filter((p) => /^dist\/(bin|cli|playground)\/.*\.d\.ts$/.test(p))).toEqual([]);
  });

  it('declares every package its JavaScript imports: rxjs and prom-client as peers, the others as dependencies', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
    const imported = new Set<string>();
    for (const { path } of packed.files.filter((f) => /^dist\/(?!playground\/web\/).*\.js$/.test(f.path))) {
      const code = readFileSync(join(ROOT, path), 'utf8');
      for (const found of code.matchAll(
        /^(?:import|export)\b[^;]*?\bfrom (['"])([^'".][^'"]*)\1|\bimport\((['"])([^'".][^'"]*)\3\)|^import (['"])([^'".][^'"]*)\5/gm,
      )) {
        const specifier = found[2] ?? found[4] ?? found[6]!;
        if (!specifier.startsWith('node:')) imported.add(packageOf(specifier));
      }
    }
    const declared = (field: string) => Object.keys(manifest[field] ?? {});
    // vite bundles the playground's UI in memory only when it runs from the TypeScript sources.
    const undeclared = [...imported].filter(
      (name) => ![...declared('dependencies'), ...declared('peerDependencies'), 'vite'].includes(name),
    );
    expect(undeclared).toEqual([]);
    expect(manifest.peerDependencies).toMatchObject({ rxjs: '^7.8.0', 'prom-client': '^15.1.0' });
    expect(declared('dependencies')).not.toContain('rxjs');
    expect(declared('dependencies')).not.toContain('prom-client');
    // Every declared dependency is something the shipped code imports (types aside).
    expect(declared('dependencies').filter((name) => !name.startsWith('@types/') && !imported.has(name))).toEqual([]);
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

  it("runs the user's own TestScheduler marble tests of multiline and limit without passing a clock", async () => {
    writeFileSync(
      join(consumer, 'marbles.mjs'),
      [
        "import { deepStrictEqual } from 'node:assert/strict';",
        "import { map } from 'rxjs';",
        "import { TestScheduler } from 'rxjs/testing';",
        "import { limit, multiline, pipeline } from 'rivulet';",
        "import { marbles } from 'rivulet/testing';",
        '',
        'const entry = (line) => ({ labels: {}, line, timestamp: 0n, structuredMetadata: [], extracted: {} });',
        'const lines = (stages) => (source) => source.pipe(pipeline(stages), map((e) => e.line));',
        'new TestScheduler(deepStrictEqual).run(({ cold, expectObservable }) => {',
        "  const blocks = cold('a b 5s |', { a: entry('start'), b: entry(' more') });",
        "  expectObservable(blocks.pipe(lines([multiline({ firstline: '^start', max_wait_time: '3s' })]))).toBe('3001ms x 2000ms |', { x: 'start\\n more' });",
        "  const burst = cold('a b 998ms c d 1s e |', { a: entry('a'), b: entry('b'), c: entry('c'), d: entry('d'), e: entry('e') });",
        "  expectObservable(burst.pipe(lines([limit({ rate: 1, burst: 1, drop: true })]))).toBe('a 999ms c 1001ms e |', { a: 'a', c: 'c', e: 'e' });",
        "  const held = cold('a b c |', { a: entry('a'), b: entry('b'), c: entry('c') });",
        "  expectObservable(held.pipe(lines([limit({ rate: 1, burst: 1 })]))).toBe('a 999ms b 999ms (c|)', { a: 'a', b: 'b', c: 'c' });",
        '});',
        "marbles(multiline, { firstline: '^start', max_wait_time: '1s' }, ({ cold, expectObservable, stage, clock }) => {",
        '  deepStrictEqual(clock.scheduler instanceof TestScheduler, true);',
        "  expectObservable(stage(cold('a 2s |', { a: entry('start') })).pipe(map((e) => e.line))).toBe('1000ms x 1000ms |', { x: 'start' });",
        '});',
        "console.log('marble tests passed');",
        '',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, ['marbles.mjs'], { cwd: consumer });
    expect(stdout).toBe('marble tests passed\n');
  });

  it("returns the user's own rxjs Observables, and the project holds one rxjs", async () => {
    writeFileSync(
      join(consumer, 'observables.mjs'),
      [
        "import { from, Observable } from 'rxjs';",
        "import { json, pipeline } from 'rivulet';",
        '',
        'const entry = { labels: {}, line: \'{"level":"info"}\', timestamp: 0n, structuredMetadata: [], extracted: {} };',
        "const stage = json({ expressions: { level: '' } });",
        'console.log(JSON.stringify({',
        '  operator: from([entry]).pipe(stage) instanceof Observable,',
        '  pipeline: from([entry]).pipe(pipeline([stage])) instanceof Observable,',
        '}));',
        '',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, ['observables.mjs'], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual({ operator: true, pipeline: true });
    const listed = JSON.parse((await run('npm', ['ls', 'rxjs', '--all', '--json'], { cwd: consumer })).stdout) as NpmTree;
    expect([...versionsOf(listed, 'rxjs')]).toEqual([version('rxjs')]);
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
        "import { Registry } from 'prom-client';",
        "import { from, lastValueFrom, type Observable, toArray } from 'rxjs';",
        "import { pipeline, staticLabels, json, labels, type Entry } from 'rivulet';",
        "import { entry as entryArbitrary, neverAddsEntries } from 'rivulet/testing';",
        '',
        'const entry: Entry = { labels: { app: \'api\' }, line: \'{"level":"info"}\', timestamp: 1n, structuredMetadata: [], extracted: {} };',
        "const out: Entry[] = await lastValueFrom(from([entry]).pipe(pipeline([json({ expressions: { level: '' } }), labels({ values: { level: '' } }), staticLabels({ values: { env: 'prod' } })]), toArray()));",
        'const level: string | undefined = out[0]?.labels.level;',
        "const counted: Observable<Entry> = from([entry]).pipe(pipeline([json({ expressions: { level: '' } })], { registry: new Registry() }));",
        'counted.subscribe();',
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

  describe("a custom stage module the bin loads meets the bin's stage registry and RxJS", () => {
    // The module's own imports of rivulet, rxjs, rxjs/operators and prom-client: each Observable the
    // bin hands the stage is an instance of the module's Observable, the operators it returns run
    // on the bin's rxjs, and its Registry is the bin's class.
    const stageModule = [
      "import { defineStage, PER_ENTRY } from 'rivulet';",
      "import { map, Observable } from 'rxjs';",
      "import { filter } from 'rxjs/operators';",
      "import { Registry } from 'prom-client';",
      'export const tagged = defineStage({',
      "  name: 'tagged',",
      "  doc: 'Appends whether the stream is an Observable of the module own rxjs.',",
      '  fields: {},',
      '  partitioning: () => PER_ENTRY,',
      '  build: (_config, context) => ({',
      "    kind: 'operator',",
      '    operator: (source) => {',
      '      const result = source.pipe(',
      "        filter((entry) => entry.line !== 'drop'),",
      '        map((entry) => ({ ...entry, line: `${entry.line} source=${source instanceof Observable} registry=${context.metrics.registry instanceof Registry}` })),',
      '      );',
      '      return result;',
      '    },',
      '  }),',
      '});',
      '',
    ].join('\n');
    const args = ['--input', 'text', '--output', 'line', '--now', '2024-01-01T00:00:00Z'];

    /** Runs the installed bin with stdin, and gives stdout, stderr and the exit code. */
    async function rivulet(argv: string[], stdin: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
      const child = execFile(bin, argv, { cwd: consumer });
      child.stdin!.end(stdin);
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d));
      child.stderr!.on('data', (d: Buffer) => (stderr += d));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      return { code, stdout, stderr };
    }

    beforeAll(() => {
      writeFileSync(join(consumer, 'tagged.mjs'), stageModule);
      writeFileSync(join(consumer, 'tagged.alloy'), 'stage.tagged { }\n');
      writeFileSync(join(consumer, 'tagged-import.alloy'), 'stages.import "tagged" {\n  path = "./tagged.mjs"\n}\n\nstage.tagged { }\n');
    });

    it('through --stages', async () => {
      const result = await rivulet(['process', '--config', 'tagged.alloy', ...args, '--stages', './tagged.mjs'], 'a\ndrop\nb\n');
      expect(result).toEqual({ code: 0, stdout: 'a source=true registry=true\nb source=true registry=true\n', stderr: '' });
    });

    it('through a stages.import block of the config', async () => {
      const result = await rivulet(['process', '--config', 'tagged-import.alloy', ...args], 'a\ndrop\n');
      expect(result).toEqual({ code: 0, stdout: 'a source=true registry=true\n', stderr: '' });
    });

    // No "running on one thread" notice on stderr: the stage list runs on the two threads.
    it('on pipeline worker threads (process --workers 2)', async () => {
      const result = await rivulet(
        ['process', '--config', 'tagged.alloy', ...args, '--workers', '2', '--stages', './tagged.mjs'],
        'a\ndrop\n',
      );
      expect(result).toEqual({ code: 0, stdout: 'a source=true registry=true\n', stderr: '' });
    });
  });

  it.skipIf(chromiumProgram.skip)(
    chromiumProgram.title('serves the playground from the installed package, and chromium runs a sample in it'),
    async () => {
      const child: ChildProcess = spawn(bin, ['playground', '--port', '0'], { cwd: consumer, stdio: ['ignore', 'pipe', 'pipe'] });
      const browser = await chromium.launch({ executablePath: requireBinary('chromium'), args: CHROMIUM_ARGS });
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
    },
    60_000,
  );
});
