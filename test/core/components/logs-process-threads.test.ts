/**
 * Threads from the library face: a program that builds a ComponentGraph asks for pipeline threads
 * with a number, and the library starts them itself (no worker file to know). Here from the
 * sources, where the threads start through tsx.
 */
import { PassThrough } from 'node:stream';
import { threadId } from 'node:worker_threads';
import { Registry } from 'prom-client';
import { ComponentGraph, defineStage, loadStageModules, PER_ENTRY, systemClock } from 'rivulet';
import { describe, expect, it } from 'vitest';
import { entry, receiverOf } from '../../support/graph-harness.js';

const CONFIG = `logs.process "p" {
  stage.json {
    expressions = { level = "" }
  }
  stage.labels {
    values = { level = "" }
  }
  stage.thread_id { }
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }
`;

describe('logs.process with pipelineThreads in its context', () => {
  it('runs built-in and custom stages on that many worker threads, and hands on in order', async () => {
    await loadStageModules(['test/fixtures/stages/thread-id.mjs'], process.cwd());
    const stdout = new PassThrough();
    let output = '';
    stdout.on('data', (chunk) => (output += chunk));
    const graph = new ComponentGraph((id) => ({
      id,
      clock: systemClock(),
      registry: new Registry(),
      stdout,
      log: () => {},
      pipelineThreads: 2,
    }));
    graph.load(CONFIG, 'threads.alloy');
    await graph.start();
    const levels = ['info', 'warn', 'error', 'debug'];
    await receiverOf(graph, 'logs.process.p').send(levels.map((level, n) => entry(JSON.stringify({ level, n }), { app: 'a' })));
    await graph.stop();

    const outputs = output
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { line: string; labels: Record<string, string> });
    // A list without state is cut into even slices: the first two entries on one thread, the last two on another.
    const threads = outputs.map(({ line }) => Number(/ thread=(\d+)$/.exec(line)![1]));
    expect(outputs.map(({ line }) => line.replace(/ thread=\d+$/, ''))).toEqual(levels.map((level, n) => JSON.stringify({ level, n })));
    expect(outputs.map(({ labels }) => labels)).toEqual(levels.map((level) => ({ app: 'a', level })));
    expect(threads[0]).toBe(threads[1]);
    expect(threads[2]).toBe(threads[3]);
    expect(new Set([threadId, threads[0], threads[2]]).size).toBe(3);
  }, 60_000);

  it("runs in place, and says why, when a stage is the program's own rather than a module's", async () => {
    defineStage({
      name: 'own_mark',
      doc: 'Appends the id of the thread it runs on.',
      fields: {},
      build: () => ({
        kind: 'map',
        process: (e) => {
          e.line = `${e.line} thread=${threadId}`;
          return e;
        },
      }),
      partitioning: () => PER_ENTRY,
    });
    const stdout = new PassThrough();
    let output = '';
    stdout.on('data', (chunk) => (output += chunk));
    const logged: unknown[] = [];
    const graph = new ComponentGraph((id) => ({
      id,
      clock: systemClock(),
      registry: new Registry(),
      stdout,
      log: (level, message, fields) => logged.push({ level, message, ...fields }),
      pipelineThreads: 2,
    }));
    graph.load(
      CONFIG.replace('stage.thread_id { }', 'stage.match {\n    selector = "{app=\\"a\\"}"\n    stage.own_mark { }\n  }'),
      'own.alloy',
    );
    await graph.start();
    await receiverOf(graph, 'logs.process.p').send([entry('{"level":"info"}', { app: 'a' })]);
    await graph.stop();
    expect(logged).toEqual([
      {
        level: 'info',
        message: 'stages run on one thread',
        reason: 'stage.own_mark is defined outside a stage module, which a thread would import',
      },
    ]);
    expect((JSON.parse(output) as { line: string }).line).toBe(`{"level":"info"} thread=${threadId}`);
  });
});
