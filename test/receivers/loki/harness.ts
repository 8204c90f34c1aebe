/**
 * Shared pieces of the log push tests: receivers that record (or hold back) what they get,
 * components built from config text with those receivers in `forward_to`, a logs.source.api on a
 * loopback port, push helpers for every body format, and metric readers.
 */
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { PassThrough } from 'node:stream';
import { Registry } from 'prom-client';
import { systemClock, type Clock } from '../../../core/clock.js';
import { gatheredFamilies } from '../../../core/metrics.js';
import type { Block } from '../../../lib/config/ast.js';
import type { EvalScope } from '../../../lib/config/evaluate.js';
import { parseConfig } from '../../../lib/config/parser.js';
import type { Entry } from '../../../core/entry.js';
import { logsReceiverCapsule, type LogsReceiver } from '../../../core/receiver.js';
import { decodeComponent, type ComponentArgs, type ComponentContext, type ComponentDefinition } from '../../../core/runtime/component.js';
import { logsSourceApiComponent, type LogsSourceApi } from '../../../receivers/logs-source-api.js';
import { snappyEncode } from '../../../lib/loki/compression.js';
import { encodePushRequest, type WireStream } from '../../../lib/loki/wire.js';

export interface RecordingReceiver extends LogsReceiver {
  readonly entries: Entry[];
  /** Number of send calls. */
  calls(): number;
}

/**
 * A receiver that records every entry. `hold` makes each send wait for the promise it returns
 * (a slow downstream); `fail` makes a send reject.
 */
export function recordingReceiver(options: { hold?: () => Promise<void>; fail?: () => Error | undefined } = {}): RecordingReceiver {
  const entries: Entry[] = [];
  let calls = 0;
  return {
    entries,
    calls: () => calls,
    async send(batch) {
      calls++;
      if (options.hold) await options.hold();
      const err = options.fail?.();
      if (err) throw err;
      entries.push(...batch);
    },
  };
}

/** A gate that holds senders until opened. */
export function gate(): { wait: () => Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { wait: () => opened, open };
}

export type TestContext = ComponentContext & { logs: string[]; output: () => string };

/** A component context with a fresh registry, on the real clock unless one is given. */
export function testContext(id: string, options: { registry?: Registry; clock?: Clock } = {}): TestContext {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (c) => (text += c));
  const logs: string[] = [];
  return {
    id,
    clock: options.clock ?? systemClock(),
    registry: options.registry ?? new Registry(),
    stdout,
    log: (level, message, fields) => logs.push(`${level} ${message}${fields ? ' ' + JSON.stringify(fields) : ''}`),
    output: () => text,
    logs,
  };
}

/** Decodes the component block in `text`, where `r0`, `r1`, … name `receivers`. */
export function componentArgs(
  def: ComponentDefinition,
  text: string,
  receivers: readonly LogsReceiver[],
  file = 'test.alloy',
): ComponentArgs<any> {
  const block = parseConfig(text, file).body[0] as Block;
  const scope: EvalScope = {
    env: () => undefined,
    resolve: (path) => {
      const m = /^r(\d+)$/.exec(path[0] ?? '');
      return m && receivers[Number(m[1])] ? logsReceiverCapsule(receivers[Number(m[1])]!) : undefined;
    },
  };
  const path = [block.label === undefined ? block.name : `${block.name} ${JSON.stringify(block.label)}`];
  return decodeComponent(def, block, scope, path).decodedArgs;
}

export interface StartedSourceApi {
  readonly component: LogsSourceApi;
  readonly url: string;
  readonly ctx: TestContext;
  stop(): Promise<void>;
}

/** The config of a logs.source.api on 127.0.0.1 (free port) forwarding to r0…r(n-1). */
export function sourceApiConfig(count: number, extra = '', http = ''): string {
  const forward = Array.from({ length: count }, (_, i) => `r${i}`).join(', ');
  return `logs.source.api "test" {\n  http {\n    listen_address = "127.0.0.1"\n    listen_port = 0\n    ${http}\n  }\n  forward_to = [${forward}]\n  ${extra}\n}\n`;
}

/** Starts logs.source.api with `extra` attribute lines and `http` block lines. */
export async function startSourceApi(
  receivers: readonly LogsReceiver[],
  options: { extra?: string; http?: string; clock?: Clock; registry?: Registry } = {},
): Promise<StartedSourceApi> {
  const ctx = testContext('logs.source.api.test', options);
  const args = componentArgs(logsSourceApiComponent, sourceApiConfig(receivers.length, options.extra, options.http), receivers);
  const component = logsSourceApiComponent.build(args, ctx) as unknown as LogsSourceApi;
  await component.start();
  const url = component.url();
  if (!url) throw new Error(`logs.source.api did not start: ${component.health().message}`);
  return { component, url, ctx, stop: () => component.stop() };
}

export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One HTTP/1.1 request with full control over headers (no fetch defaults added). */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: OutgoingHttpHeaders; body?: Uint8Array | string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'POST', headers: options.headers ?? {}, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A snappy-compressed protobuf push body. */
export function protoBody(streams: readonly WireStream[]): Buffer {
  return snappyEncode(encodePushRequest(streams));
}

/** POSTs a protobuf push. */
export function pushProto(url: string, streams: readonly WireStream[], headers: OutgoingHttpHeaders = {}): Promise<RawResponse> {
  return rawRequest(`${url}/loki/api/v1/push`, {
    headers: { 'Content-Type': 'application/x-protobuf', ...headers },
    body: protoBody(streams),
  });
}

/** POSTs a JSON push (`body` as given, so malformed bodies can be sent too). */
export function pushJson(url: string, body: unknown, headers: OutgoingHttpHeaders = {}): Promise<RawResponse> {
  return rawRequest(`${url}/loki/api/v1/push`, {
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
}

/** The value of one series of a counter or gauge, 0 when absent. */
export async function metricValue(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  // As /metrics serves them: a config component counts on a registry of its own, gathered here.
  const family = (await gatheredFamilies(registry)).find((f) => f.name === name);
  if (!family) return 0;
  const found = (family.values as Array<{ labels: Record<string, unknown>; value: number }>).find((v) =>
    Object.entries(labels).every(([k, value]) => String(v.labels[k]) === value),
  );
  return found?.value ?? 0;
}

/** Polls `check` until it holds or `ms` pass. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** An entry as tests write them. */
export function entryOf(line: string, labels: Record<string, string> = {}, timestamp = 1_000_000_000n): Entry {
  return { labels, line, timestamp, structuredMetadata: [], extracted: {} };
}
