/**
 * Shared pieces of the writer tests: downstream servers that record what the writer sends (a
 * Connect Push server and a plain ingest server), a writer built from config text, and a backoff
 * clock that records waits instead of sleeping.
 */
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConnectError } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { Registry } from 'prom-client';
import { parseConfig } from '../../../lib/config/parser.js';
import type { Block } from '../../../lib/config/ast.js';
import { PusherService, type PushRequest } from '../../../lib/pyroscope/gen/push/v1/push_pb.js';
import { decodeComponent, validatedArgs, type ComponentArgs } from '../../../core/runtime/component.js';
import type { BackoffClock } from '../../../lib/backoff.js';
import type { Clock } from '../../../core/clock.js';
import type { Log } from '../../../lib/log.js';
import type { WriteConfig } from '../../../sinks/profiles/config.js';
import { WriteMetrics } from '../../../sinks/profiles/metrics.js';
import { ProfilesWriter } from '../../../sinks/profiles/writer.js';
import { profilesWriteComponent, USER_AGENT } from '../../../sinks/profiles-write.js';

export { USER_AGENT };

export interface PushCall {
  readonly request: PushRequest;
  readonly headers: Headers;
  readonly timeoutMs: number | undefined;
}

export interface DownstreamServer<Call> {
  readonly url: string;
  readonly calls: Call[];
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function closer(server: Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}

/** A Connect Push server; `answer` may throw a ConnectError to fail the n-th call (0-based). */
export async function startPushServer(
  answer: (n: number, call: PushCall) => void | Promise<void> = () => {},
): Promise<DownstreamServer<PushCall>> {
  const calls: PushCall[] = [];
  const server = createServer(
    connectNodeAdapter({
      routes(router) {
        router.service(PusherService, {
          async push(request, context) {
            const call = { request, headers: context.requestHeader, timeoutMs: context.timeoutMs() };
            calls.push(call);
            await answer(calls.length - 1, call);
            return {};
          },
        });
      },
    }),
  );
  return { url: await listen(server), calls, close: closer(server) };
}

export interface IngestCall {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  readonly body: Buffer;
}

/** A plain HTTP server standing in for an ingest endpoint; `answer` picks each reply. */
export async function startIngestServer(
  answer: (n: number, call: IngestCall) => { status: number; body?: string } | Promise<{ status: number; body?: string }> = () => ({
    status: 200,
  }),
): Promise<DownstreamServer<IngestCall>> {
  const calls: IngestCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const call = { url: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) };
      calls.push(call);
      const reply = await answer(calls.length - 1, call);
      res.writeHead(reply.status);
      res.end(reply.body ?? '');
    });
  });
  return { url: await listen(server), calls, close: closer(server) };
}

/** A backoff clock that never sleeps and remembers every wait it was asked for. */
export function instantClock(): BackoffClock & { waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    random: () => 0.5,
    sleep: async (ms) => {
      waits.push(ms);
    },
  };
}

/** Decodes a `profiles.write` block written as its body. */
export function decodeWrite(body: string): ComponentArgs<any> {
  const block = parseConfig(`profiles.write "test" {\n${body}\n}\n`, 'write.alloy').body[0] as Block;
  const path = ['profiles.write "test"'];
  const scope = { env: () => undefined, resolve: () => undefined };
  return decodeComponent(profilesWriteComponent, block, scope, path).decodedArgs;
}

/** The settings of a `profiles.write` block written as its body: decoded and validated, as the component gets them. */
export function writeConfigOf(body: string): WriteConfig {
  return validatedArgs(profilesWriteComponent, decodeWrite(body), { id: 'profiles.write.test' }).values;
}

/** A writer for a `profiles.write` body, pacing retries with `clock`. */
export function writerFor(body: string, clock: BackoffClock = instantClock(), registry = new Registry()) {
  const config = writeConfigOf(body);
  const metrics = new WriteMetrics(registry, 'profiles.write.test');
  return { writer: new ProfilesWriter(config, { metrics, userAgent: USER_AGENT, backoff: clock }), registry, config };
}

/** A signal nobody aborts. */
/** One never-aborting signal for every call of a file; calls run concurrently, so it may carry many listeners. */
export const noSignal = new AbortController().signal;
setMaxListeners(0, noSignal);

export function connectError(message: string, code: number): ConnectError {
  return new ConnectError(message, code);
}

/** A writer for a `profiles.write` body on a component clock: its deadlines, retry waits and latencies. */
export function writerOn(body: string, clock: Clock, log?: Log, registry = new Registry()) {
  const config = writeConfigOf(body);
  const metrics = new WriteMetrics(registry, 'profiles.write.test', clock);
  return { writer: new ProfilesWriter(config, { metrics, userAgent: USER_AGENT, clock, ...(log ? { log } : {}) }), registry, config };
}
