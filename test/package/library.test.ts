import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLoki, type FakeLoki } from '../sinks/loki/fake-loki.js';
import { freePort, installPackedConsumer, ROOT, run, TSC, type Consumer } from '../support/packed-consumer.js';

/**
 * docs/library.md as a user reads it: every example type-checks under strict `nodenext` in a
 * new project that installed the packed tarball, and the ones that run on their own run there
 * with plain Node, the opening program against a Loki test server.
 */
const DOC = readFileSync(join(ROOT, 'docs/library.md'), 'utf8');
const EXAMPLES = [...DOC.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
const example = (marker: string): string => {
  const found = EXAMPLES.find((e) => e.includes(marker));
  if (found === undefined) throw new Error(`no example in docs/library.md uses ${marker}`);
  return found;
};

let consumer: Consumer;
let loki: FakeLoki | undefined;

beforeAll(async () => {
  consumer = await installPackedConsumer(['rxjs', 'prom-client', 'koa', '@types/koa']);
  EXAMPLES.forEach((text, i) => writeFileSync(join(consumer.dir, `example-${i}.mjs`), text));
}, 180_000);

afterAll(async () => {
  await loki?.close();
  if (consumer) rmSync(consumer.work, { recursive: true, force: true });
});

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const criLine = (second: number, text: string) => `2024-01-01T00:00:0${second}.000000000Z stdout F ${text}\n`;

describe('docs/library.md in an installed project', () => {
  it('opens with a complete program of at most 40 lines', () => {
    expect(EXAMPLES[0]).toContain('tailFiles(');
    expect(EXAMPLES[0]!.trimEnd().split('\n').length).toBeLessThanOrEqual(40);
  });

  it('type-checks every example under strict nodenext: 0 errors', async () => {
    writeFileSync(
      join(consumer.dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          allowJs: true,
          checkJs: true,
        },
        files: EXAMPLES.map((_, i) => `example-${i}.mjs`),
      }),
    );
    const result = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: consumer.dir }).catch((err: { stdout: string }) => err);
    expect(result.stdout).toBe('');
  }, 120_000);

  it('runs the opening program: tailed CRI files and pushes reach Loki, and SIGTERM loses nothing acknowledged', async () => {
    loki = await startFakeLoki();
    const logDir = join(consumer.work, 'pods');
    const stateDir = join(consumer.work, 'state');
    mkdirSync(logDir);
    mkdirSync(stateDir);
    const logFile = join(logDir, 'api.log');
    writeFileSync(logFile, criLine(0, '{"level":"warn","msg":"a"}') + criLine(1, '{"level":"info","msg":"b"}'));
    const port = await freePort();
    const child = spawn(process.execPath, ['example-0.mjs'], {
      cwd: consumer.dir,
      env: { ...process.env, LOG_DIR: logDir, STATE_DIR: stateDir, LOKI_URL: `${loki.url}/loki/api/v1/push`, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const base = `http://127.0.0.1:${port}`;
    await until(async () => (await fetch(`${base}/ready`).catch(() => undefined))?.status === 200, 'the push route');

    const pushed: number[] = [];
    for (const n of [1, 2, 3]) {
      const response = await fetch(`${base}/loki/api/v1/push`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ streams: [{ stream: { app: 'p' }, values: [[`170000000000000000${n}`, `pushed ${n}`]] }] }),
      });
      pushed.push(response.status);
    }
    expect(pushed).toEqual([204, 204, 204]);
    // The last block stays open in multiline: only stopping (or max_wait_time) sends it on.
    appendFileSync(logFile, criLine(2, '{"level":"error","msg":"c"}') + criLine(3, '  at frame 1'));
    await until(() => loki!.lines().includes('{"level":"info","msg":"b"}'), 'the tailed lines');
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^logs_source_api_.*component_id="lokiPushReceiver"/m);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    const byLine = new Map(loki.accepted.flatMap((p) => p.streams.flatMap((s) => s.entries.map((e) => [e.line, s.labels] as const))));
    expect([...byLine.keys()].sort()).toEqual(
      [
        'pushed 1',
        'pushed 2',
        'pushed 3',
        '{"level":"error","msg":"c"}\n  at frame 1',
        '{"level":"info","msg":"b"}',
        '{"level":"warn","msg":"a"}',
      ].sort(),
    );
    expect(loki.lines()).toHaveLength(6);
    expect(byLine.get('{"level":"error","msg":"c"}\n  at frame 1')).toMatchObject({ level: 'error', filename: logFile });
    expect(byLine.get('pushed 2')).toEqual({ app: 'p', source: 'push' });
    const positions = JSON.parse(readFileSync(join(stateDir, 'positions.yml'), 'utf8')) as { files: Record<string, { offset: string }> };
    expect(positions.files[logFile]?.offset).toBe(String(statSync(logFile).size));
  }, 90_000);

  it('runs the stdin example: lines in, JSON lines out', async () => {
    const child = spawn(process.execPath, [`example-${EXAMPLES.indexOf(example('stdinLines({'))}.mjs`], { cwd: consumer.dir });
    child.stdin.end('{"level":"warn","msg":"disk"}\nplain\n');
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(0);
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { line: string; labels: Record<string, string> });
    expect(lines.map((l) => [l.line, l.labels])).toEqual([
      ['{"level":"warn","msg":"disk"}', { job: 'cat' }],
      ['plain', { job: 'cat' }],
    ]);
  }, 60_000);

  it("runs the virtual-time example: the user's TestScheduler drives multiline without a clock", async () => {
    const file = `example-${EXAMPLES.indexOf(example('TestScheduler'))}.mjs`;
    const result = await run(process.execPath, [file], { cwd: consumer.dir }).catch((err: { stderr: string }) => err);
    expect(result.stderr).toBe('');
  }, 60_000);
});

describe('pipeline threads in an installed project', () => {
  const PROGRAM = `import { Registry } from 'prom-client';
import { ComponentGraph, loadStageModules, systemClock } from 'rivulet';

await loadStageModules(['./thread-id.mjs'], process.cwd());
const graph = new ComponentGraph((id) => ({
  id,
  clock: systemClock(),
  registry: new Registry(),
  stdout: process.stdout,
  log: () => {},
  pipelineThreads: 2,
}));
graph.load(\`logs.process "p" {
  stage.json {
    expressions = { level = "" }
  }
  stage.thread_id { }
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }
\`, 'threads.alloy');
await graph.start();
const entry = (level, n) => ({ labels: { app: 'a' }, line: JSON.stringify({ level, n }), timestamp: 1_000_000_000n, structuredMetadata: [], extracted: {} });
await graph.component('logs.process.p').exports.receiver.value.send(['info', 'warn', 'error', 'debug'].map(entry));
await graph.stop();
`;

  it('runs a ComponentGraph asked for two threads on two worker threads the package starts itself', async () => {
    writeFileSync(join(consumer.dir, 'thread-id.mjs'), readFileSync(join(ROOT, 'test/fixtures/stages/thread-id.mjs')));
    writeFileSync(join(consumer.dir, 'threads.mjs'), PROGRAM);
    const { stdout, stderr } = await run(process.execPath, ['threads.mjs'], { cwd: consumer.dir });
    expect(stderr).toBe('');
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { line: string }).line);
    const threads = lines.map((line) => Number(/ thread=(\d+)$/.exec(line)![1]));
    expect(lines.map((line) => line.replace(/ thread=\d+$/, ''))).toEqual(
      ['info', 'warn', 'error', 'debug'].map((level, n) => JSON.stringify({ level, n })),
    );
    // Even slices of a stateless batch, each on a thread of its own, neither the program's main thread (0).
    expect([threads[0] === threads[1], threads[2] === threads[3]]).toEqual([true, true]);
    expect(new Set([0, threads[0], threads[2]]).size).toBe(3);
  }, 60_000);
});
