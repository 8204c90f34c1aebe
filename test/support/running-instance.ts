/**
 * A running instance for tests of what a run server offers (taps, /metrics, top): a file source whose
 * entries reach an echo sink, optionally through a logs.process, either built in this process as
 * `rivulet run` builds it (graph + run server) or started through `rivulet run` itself.
 */
import { EventEmitter } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { Registry } from 'prom-client';
import { runCommand } from '../../cli/run.js';
import { systemClock } from '../../core/clock.js';
import { ComponentGraph } from '../../core/runtime/graph.js';
import { startRunServer } from '../../cli/run-server.js';
import { TapHub, type TapHubOptions } from '../../core/inspect/tap.js';
import '../../index.js';

/** A writable stream that keeps everything written to it; `isTTY` makes it look like a terminal. */
export function capture(isTTY = false): { stream: PassThrough; text: () => string } {
  const stream = Object.assign(new PassThrough(), isTTY ? { isTTY: true } : {});
  let text = '';
  stream.on('data', (c) => (text += c));
  return { stream, text: () => text };
}

/** Polls `check` every 10 ms until it holds; throws "timed out waiting for <what>" after `ms`. */
export async function eventually(check: () => boolean | Promise<boolean>, what = 'condition', ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** What flows between the file source and the echo sink. */
export interface FileToEchoShape {
  /** An attribute line for the file source, e.g. `labels = { job = "tap" }`. */
  sourceLabels?: string;
  /** Stage blocks of a logs.process "p" between source and sink; without them the source forwards to the sink. */
  stages?: string[];
}

/**
 * The config of a `logs.source.file "in"` reading `input` (polled every 10–20 ms so tests see appended lines
 * quickly) whose entries reach `logs.echo "out"` writing `output`, through `logs.process "p"` when stages are given.
 */
export function fileToEchoConfig(input: string, output: string, shape: FileToEchoShape = {}): string {
  const source = [
    'logs.source.file "in" {',
    `  path = ${JSON.stringify(input)}`,
    ...(shape.sourceLabels === undefined ? [] : [`  ${shape.sourceLabels}`]),
    '  file_watch {',
    '    min_poll_frequency = "10ms"',
    '    max_poll_frequency = "20ms"',
    '  }',
    `  forward_to = [${shape.stages === undefined ? 'logs.echo.out' : 'logs.process.p'}.receiver]`,
    '}',
  ];
  const process =
    shape.stages === undefined
      ? []
      : ['logs.process "p" {', ...shape.stages.map((s) => `  ${s}`), '  forward_to = [logs.echo.out.receiver]', '}'];
  return [...source, ...process, `logs.echo "out" { path = ${JSON.stringify(output)} }`, ''].join('\n');
}

/** A {@link fileToEchoConfig} graph running in this process behind a run server. */
export interface FileInstance {
  /** The run server's base URL. */
  url: string;
  /** The file the source reads: append lines to send entries. */
  input: string;
  /** The lines the echo sink wrote so far. */
  outputLines: () => string[];
  registry: Registry;
  /** Stops the graph, then the run server. */
  stop: () => Promise<void>;
}

/**
 * Starts a {@link fileToEchoConfig} graph with taps and a run server on a free port, as `rivulet run` builds
 * them; its files are `<dir>/<name>.log` and `<dir>/<name>.out`.
 */
export async function startFileInstance(
  dir: string,
  name: string,
  shape: FileToEchoShape = {},
  hubOptions: TapHubOptions = {},
): Promise<FileInstance> {
  const input = join(dir, `${name}.log`);
  const output = join(dir, `${name}.out`);
  writeFileSync(input, '');
  const registry = new Registry();
  const taps = new TapHub(registry, hubOptions);
  const clock = systemClock();
  const graph = new ComponentGraph((id) => ({ id, clock, registry, stdout: new PassThrough(), log: () => {} }), taps.wrapExport);
  graph.load(fileToEchoConfig(input, output, shape), `${name}.alloy`);
  const server = await startRunServer({ host: '127.0.0.1', port: 0, registry, graph, reload: async () => [], taps });
  await graph.start();
  const outputLines = () => {
    try {
      return readFileSync(output, 'utf8').split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  return {
    url: server.url,
    input,
    outputLines,
    registry,
    stop: async () => {
      await graph.stop();
      await server.close();
    },
  };
}

/** `rivulet run` of a {@link fileToEchoConfig} config, started in this process. */
export interface RunningCli {
  /** host:port of its run server. */
  addr: string;
  /** The file the source reads. */
  input: string;
  /** Sends SIGTERM; `exited` then resolves. */
  terminate: () => void;
  /** Its exit code. */
  exited: Promise<number>;
}

/**
 * Writes `<dir>/run.alloy` (reading `<dir>/in.log`, echoing to `<dir>/out.jsonl`), runs `rivulet run` on it with
 * its run server on a free port, and waits (up to 15 s: starting under a loaded machine takes seconds) until it
 * says it is running.
 */
export async function startRunCli(dir: string, shape: FileToEchoShape = {}): Promise<RunningCli> {
  const input = join(dir, 'in.log');
  writeFileSync(input, '');
  const file = join(dir, 'run.alloy');
  writeFileSync(file, fileToEchoConfig(input, join(dir, 'out.jsonl'), shape));
  const stderr = capture();
  const signals = new EventEmitter();
  const exited = runCommand(
    [file, '--server.http.listen-addr', '127.0.0.1:0'],
    { stdin: Readable.from([]), stdout: new PassThrough(), stderr: stderr.stream },
    signals,
  );
  const terminate = () => signals.emit('SIGTERM');
  try {
    await eventually(() => /addr="([^"]+)"/.test(stderr.text()) && stderr.text().includes('running'), 'the run server', 15_000);
  } catch (error) {
    terminate();
    await exited;
    throw error;
  }
  const addr = new URL(/addr="([^"]+)"/.exec(stderr.text())![1]!).host;
  return { addr, input, terminate, exited };
}
