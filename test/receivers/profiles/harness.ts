/**
 * Shared pieces of the profile component tests: receivers that record what they get, a
 * profiles.receive_http started from config text on a loopback port, raw HTTP requests (repeated
 * headers, trailers) and small pprof payloads.
 */
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { createServer } from 'node:net';
import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { Profile, ValueType, Sample, Function as PprofFunction, Location, Line, StringTable } from 'pprof-format';
import { Registry } from 'prom-client';
import { systemClock } from '../../../core/clock.js';
import { parseConfig } from '../../../lib/config/parser.js';
import type { Block } from '../../../lib/config/ast.js';
import type { EvalScope } from '../../../lib/config/evaluate.js';
import { deadlineOf } from '../../../core/deadline.js';
import { labelsToObject } from '../../../lib/pyroscope/labels.js';
import { profilesReceiverCapsule, type IngestProfile, type ProfilesReceiver, type PushSeries } from '../../../core/profiles.js';
import { decodeComponent, type ComponentArgs, type ComponentContext } from '../../../core/runtime/component.js';
import { profilesReceiveHttpComponent, type ProfilesReceiveHttp } from '../../../receivers/profiles-receive-http.js';

export interface RecordedAppend {
  readonly labels: Record<string, string>;
  readonly series: PushSeries;
  readonly deadline: number | undefined;
  readonly signal: AbortSignal;
}

export interface RecordedIngest {
  readonly labels: Record<string, string>;
  readonly profile: IngestProfile;
  readonly deadline: number | undefined;
  readonly signal: AbortSignal;
}

export interface RecordingReceiver extends ProfilesReceiver {
  readonly appends: RecordedAppend[];
  readonly ingests: RecordedIngest[];
}

/** A receiver that records every call; `fail` makes a call reject, `delayMs` makes it slow. */
export function recordingReceiver(options: { fail?: () => Error | undefined; delayMs?: number } = {}): RecordingReceiver {
  const appends: RecordedAppend[] = [];
  const ingests: RecordedIngest[] = [];
  const settle = async () => {
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    const err = options.fail?.();
    if (err) throw err;
  };
  return {
    appends,
    ingests,
    async append(series, signal) {
      appends.push({ labels: labelsToObject(series.labels), series, deadline: deadlineOf(signal), signal });
      await settle();
    },
    async appendIngest(profile, signal) {
      ingests.push({ labels: labelsToObject(profile.labels), profile, deadline: deadlineOf(signal), signal });
      await settle();
    },
  };
}

/** A component context on the real clock with a fresh registry. */
export function testContext(id: string, registry = new Registry()): ComponentContext & { output: () => string; logs: string[] } {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (c) => (text += c));
  const logs: string[] = [];
  return {
    id,
    clock: systemClock(),
    registry,
    stdout,
    log: (level, message, fields) => logs.push(`${level} ${message}${fields ? ' ' + JSON.stringify(fields) : ''}`),
    output: () => text,
    logs,
  };
}

/** Decodes the component block in `text` with `r0`, `r1`, … naming `receivers`. */
export function componentArgs(text: string, receivers: readonly ProfilesReceiver[], file = 'test.alloy'): ComponentArgs<any> {
  const block = parseConfig(text, file).body[0] as Block;
  const scope: EvalScope = {
    env: () => undefined,
    resolve: (path) => {
      const m = /^r(\d+)$/.exec(path[0] ?? '');
      return m && receivers[Number(m[1])] ? profilesReceiverCapsule(receivers[Number(m[1])]!) : undefined;
    },
  };
  const path = [`${block.name} ${JSON.stringify(block.label)}`];
  return decodeComponent(profilesReceiveHttpComponent, block, scope, path).decodedArgs;
}

export interface StartedReceiver {
  readonly component: ProfilesReceiveHttp;
  readonly url: string;
  readonly registry: Registry;
  readonly ctx: ReturnType<typeof testContext>;
  /** Applies new `http` block contents (and receivers) and waits for the listener to settle. */
  update(http: string, receivers?: readonly ProfilesReceiver[]): Promise<void>;
  stop(): Promise<void>;
}

export function receiverConfig(http: string, count: number, label = 'test'): string {
  const forward = Array.from({ length: count }, (_, i) => `r${i}`).join(', ');
  const port = /\blisten_port\b/.test(http) ? '' : 'listen_port = 0\n    ';
  return `profiles.receive_http ${JSON.stringify(label)} {\n  http {\n    listen_address = "127.0.0.1"\n    ${port}${http}\n  }\n  forward_to = [${forward}]\n}\n`;
}

/**
 * Starts profiles.receive_http on 127.0.0.1 with `http` as extra `http` block lines (port 0
 * unless they set `listen_port`), or with the whole component block given as `config`.
 */
export async function startReceiveHttp(
  receivers: readonly ProfilesReceiver[],
  options: { http?: string; config?: string; registry?: Registry; id?: string } = {},
): Promise<StartedReceiver> {
  const registry = options.registry ?? new Registry();
  const ctx = testContext(options.id ?? 'profiles.receive_http.test', registry);
  const text = options.config ?? receiverConfig(options.http ?? '', receivers.length);
  const component = profilesReceiveHttpComponent.build(componentArgs(text, receivers), ctx) as unknown as ProfilesReceiveHttp;
  await component.start();
  const url = component.url();
  if (!url) throw new Error(`receiver did not start: ${component.health().message}`);
  return {
    component,
    url,
    registry,
    ctx,
    async update(http, next = receivers) {
      component.update(componentArgs(options.config ? http : receiverConfig(http, next.length), next));
      await component.settled();
    },
    stop: () => component.stop(),
  };
}

/** A free loopback port (closed again before returning). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly trailers: NodeJS.Dict<string>;
  readonly body: Buffer;
}

/** One HTTP/1.1 request with full control of headers (array values become repeated lines). */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: OutgoingHttpHeaders; body?: Uint8Array | string; agent?: false; path?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    // `path` is sent as written: a URL would resolve `..` and drop `.` before sending.
    const target = {
      method: options.method ?? 'POST',
      headers: options.headers ?? {},
      agent: false as const,
      ...(options.path ? { path: options.path } : {}),
    };
    const req = httpRequest(url, target, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, trailers: res.trailers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** `n` pseudo-random bytes, the same for the same seed. */
export function randomBytes(n: number, seed = 1): Buffer {
  const out = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** A small gzipped pprof profile with `samples` samples of one stack. */
export function pprofBytes(samples = 3, padTo = 0): Buffer {
  const strings = new StringTable();
  const fn = new PprofFunction({
    id: 1,
    name: strings.dedup('main.work'),
    systemName: strings.dedup('main.work'),
    filename: strings.dedup('main.go'),
  });
  const location = new Location({ id: 1, line: [new Line({ functionId: 1, line: 10 })] });
  const profile = new Profile({
    sampleType: [new ValueType({ type: strings.dedup('cpu'), unit: strings.dedup('nanoseconds') })],
    sample: Array.from({ length: samples }, (_, i) => new Sample({ locationId: [1], value: [1000 * (i + 1)] })),
    location: [location],
    function: [fn],
    stringTable: strings,
    periodType: new ValueType({ type: strings.dedup('cpu'), unit: strings.dedup('nanoseconds') }),
    period: 10_000_000,
  });
  if (padTo > 0) {
    // Padding goes into a comment string so the profile stays valid.
    const encodedSize = gzipSync(profile.encode()).length;
    if (padTo > encodedSize)
      profile.comment = [
        strings.dedup(
          randomBytes(padTo - encodedSize)
            .toString('base64')
            .slice(0, padTo - encodedSize),
        ),
      ];
  }
  return gzipSync(profile.encode());
}

/** Frames one gRPC / gRPC-Web message. */
export function grpcFrame(message: Uint8Array, flags = 0): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out[0] = flags;
  out.writeUInt32BE(message.length, 1);
  Buffer.from(message).copy(out, 5);
  return out;
}
