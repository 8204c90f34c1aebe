/**
 * `rivulet run` in this process, in place or sharded, for the sharded runtime's tests: the
 * command's own code, its shard threads started from the sources, its log read for the addresses.
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runCommand } from '../../../cli/run.js';
// Every built-in stage and component, as the executable registers them.
import '../../../index.js';
import { protoBody } from '../../receivers/loki/harness.js';
import type { WireStream } from '../../../lib/loki/wire.js';

export interface CommandRun {
  /** The config file the command runs. */
  readonly file: string;
  /** The run server (`/metrics`). */
  readonly runUrl: string;
  /** The base URLs of the logs.source.api components, by id. */
  readonly apiUrls: ReadonlyMap<string, string>;
  stderr(): string;
  stdout(): string;
  /** Sends `SIGTERM` and resolves with the exit code once the command returned. */
  stop(): Promise<number>;
  readonly signals: EventEmitter;
}

/** Runs `config` with `flags` (`['--shards', '2']`), resolved once every source listens. */
export async function runConfig(config: string, flags: readonly string[], apis: readonly string[]): Promise<CommandRun> {
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-shards-'));
  const file = join(dir, 'run.alloy');
  writeFileSync(file, config);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const signals = new EventEmitter();
  const apiUrls = new Map<string, string>();
  let runUrl = '';
  const started = new Promise<void>((resolve) => {
    stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      for (const line of err.split('\n')) {
        const addr = /msg="now listening for http traffic".*addr="([^"]+)"/.exec(line)?.[1];
        if (!addr) continue;
        const component = /component="([^"]+)"/.exec(line)?.[1];
        if (component) apiUrls.set(component, addr);
        else runUrl = addr;
      }
      if (runUrl && apis.every((id) => apiUrls.has(id)) && err.includes('msg="running; press Ctrl-C to stop"')) resolve();
    });
  });
  const exit = runCommand(
    [file, '--server.http.listen-addr', '127.0.0.1:0', ...flags],
    { stdin: new PassThrough(), stdout, stderr },
    signals,
  );
  const code = await Promise.race([started.then(() => undefined), exit]);
  if (code !== undefined) throw new Error(`rivulet run exited with ${code} before starting:\n${err}`);
  return {
    file,
    runUrl,
    apiUrls,
    signals,
    stderr: () => err,
    stdout: () => out,
    stop: () => {
      signals.emit('SIGTERM');
      return exit;
    },
  };
}

/** Pushes `streams` as one snappy protobuf body; the status and the answer's text. */
export async function push(
  url: string,
  streams: readonly WireStream[],
): Promise<{ status: number; text: string; retryAfter: string | null }> {
  const res = await fetch(`${url}/loki/api/v1/push`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-protobuf' },
    body: protoBody(streams) as Uint8Array<ArrayBuffer>,
  });
  return { status: res.status, text: await res.text(), retryAfter: res.headers.get('retry-after') };
}
