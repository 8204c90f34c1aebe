/**
 * End-to-end helpers: Rivulet configs run as in-process component graphs or as `rivulet run`
 * child processes, and a push client that retries what it is told to retry and records exactly
 * which entries were acknowledged.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { systemClock } from '../../core/clock.js';
import { ComponentGraph } from '../../core/runtime/graph.js';
import type { LogsSourceApi } from '../../receivers/logs-source-api.js';
import { protoBody } from '../receivers/loki/harness.js';
import type { WireStream } from '../../lib/loki/wire.js';
import '../../index.js';

export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

export interface InProcessRun {
  readonly graph: ComponentGraph;
  readonly registry: Registry;
  readonly logs: string[];
  /** The base URL of the logs.source.api component `id`. */
  apiUrl(id: string): string;
  stop(): Promise<void>;
}

/** Loads and starts a config in this process, on the real clock. */
export async function startInProcess(config: string, file = 'e2e.alloy'): Promise<InProcessRun> {
  const registry = new Registry();
  const logs: string[] = [];
  const graph = new ComponentGraph((id) => ({
    id,
    clock: systemClock(),
    registry,
    stdout: new PassThrough(),
    log: (level, message, fields) => logs.push(`${level} ${id} ${message}${fields ? ' ' + JSON.stringify(fields) : ''}`),
  }));
  graph.load(config, file);
  await graph.start();
  return {
    graph,
    registry,
    logs,
    apiUrl(id) {
      const url = (graph.component(id) as unknown as LogsSourceApi | undefined)?.url();
      if (!url) throw new Error(`${id} is not listening: ${logs.join('\n')}`);
      return url;
    },
    stop: () => graph.stop(),
  };
}

export interface ChildRun {
  readonly child: ChildProcess;
  /** The run server (`/metrics`, `/api/v0/components`). */
  readonly runUrl: string;
  /** Base URLs of the logs.source.api components by id. */
  readonly apiUrls: ReadonlyMap<string, string>;
  stderr(): string;
  stdout(): string;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
}

/**
 * Starts `rivulet run CONFIG` as a child process and waits until the run server and every
 * logs.source.api listed in `apis` are listening. `launcher` is node's arguments before `run`:
 * the built CLI unless told.
 */
export async function spawnRun(
  configFile: string,
  apis: readonly string[],
  timeoutMs = 60_000,
  env: NodeJS.ProcessEnv = process.env,
  launcher: readonly string[] = [join(PROJECT_ROOT, 'bin/rivulet.mjs')],
): Promise<ChildRun> {
  const child = spawn(process.execPath, [...launcher, 'run', configFile, '--server.http.listen-addr', '127.0.0.1:0'], {
    cwd: PROJECT_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
    env,
  });
  let stderr = '';
  let stdout = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const apiUrls = new Map<string, string>();
  let runUrl = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      // The caller never gets the child to stop, so it must not outlive the failed start.
      child.kill('SIGKILL');
      reject(new Error(`rivulet run did not start in time:\n${stderr}`));
    }, timeoutMs);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      for (const line of stderr.split('\n')) {
        const addr = /msg="now listening for http traffic".*addr="([^"]+)"/.exec(line)?.[1];
        if (!addr) continue;
        const component = /component="([^"]+)"/.exec(line)?.[1];
        if (component) apiUrls.set(component, addr);
        else runUrl = addr;
      }
      if (runUrl && apis.every((id) => apiUrls.has(id))) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`rivulet run exited with ${code} before starting:\n${stderr}`));
    });
  });
  return { child, runUrl, apiUrls, stderr: () => stderr, stdout: () => stdout, exited };
}

/** The JSON lines logs.echo wrote to `file`, parsed. */
export function echoedEntries(
  file: string,
): Array<{ labels: Record<string, string>; line: string; timestamp: string; structured_metadata: Record<string, string> }> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ReturnType<typeof echoedEntries>[number]);
}

export interface PushOutcome {
  readonly status: number;
  readonly attempts: number;
}

/**
 * Pushes one protobuf body, retrying 429, 503 and connection errors (after `Retry-After` when
 * given, else `retryMs`) until `deadline`. Returns the final status (-1: never answered).
 */
export async function pushWithRetry(
  url: string,
  streams: readonly WireStream[],
  options: { retryMs?: number; deadline?: number; retry?: boolean } = {},
): Promise<PushOutcome> {
  const body = protoBody(streams);
  const deadline = options.deadline ?? Date.now() + 30_000;
  for (let attempt = 1; ; attempt++) {
    let status = -1;
    let wait = options.retryMs ?? 50;
    try {
      const res = await fetch(`${url}/loki/api/v1/push`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-protobuf' },
        body: body as Uint8Array<ArrayBuffer>,
      });
      await res.arrayBuffer();
      status = res.status;
      const after = res.headers.get('retry-after');
      if (after !== null) wait = Math.min(wait, Number(after) * 1000);
    } catch {
      status = -1;
    }
    const retryable = status === 429 || status === 503 || status === -1;
    if (!retryable || options.retry === false || Date.now() > deadline) return { status, attempts: attempt };
    await new Promise((r) => setTimeout(r, wait));
  }
}

/** `count` entries of one stream, numbered from `from`, in CRI format with a JSON body. */
export function criStream(pod: string, from: number, count: number, baseNs: bigint): WireStream {
  const entries = Array.from({ length: count }, (_, k) => {
    const seq = from + k;
    const ns = baseNs + BigInt(seq);
    const level = seq % 10 === 0 ? 'warn' : 'info';
    const body = JSON.stringify({ level, msg: `request ${seq} served`, trace_id: `t${seq % 97}`, seq, pod });
    return { timestampNs: ns, line: `2024-05-01T10:00:00.${String(seq % 1e9).padStart(9, '0')}Z stdout F ${body}`, structuredMetadata: [] };
  });
  return { labels: `{namespace="prod", pod="${pod}", container="app"}`, entries };
}

/** A child run's /metrics, as Prometheus text. */
export async function scrape(run: ChildRun): Promise<string> {
  return (await fetch(`${run.runUrl}/metrics`)).text();
}

/** The sum of every series of `name` in a Prometheus text exposition, or of those whose labels contain `labelled`. */
export function metricSum(text: string, name: string, labelled = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || !line.includes(labelled)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    sum += Number(rest.slice(rest.lastIndexOf(' ') + 1));
  }
  return sum;
}
