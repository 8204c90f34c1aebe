/**
 * A Loki-compatible push endpoint for tests: decodes every push with the receiver's decoder,
 * records it with its headers, and answers what the test scripts (204 by default). It can go
 * down and come back on the same port.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodePushBody, type PushedStream } from '../../../receivers/loki/push-body.js';

export interface RecordedPush {
  readonly headers: IncomingHttpHeaders;
  readonly streams: readonly PushedStream[];
}

export interface ScriptedAnswer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Milliseconds to wait before answering. */
  readonly delayMs?: number;
}

export interface FakeLoki {
  readonly url: string;
  readonly port: number;
  /** Pushes answered 2xx, in arrival order. */
  readonly accepted: RecordedPush[];
  /** Every push that arrived, with the status it got. */
  readonly arrivals: Array<{ status: number; at: number }>;
  /** The answer to the next pushes; pushes beyond the script get 204. */
  script(...answers: ScriptedAnswer[]): void;
  /** The answer to every push beyond the script until called again (none: 204): an outage. */
  answerAll(answer?: ScriptedAnswer): void;
  /** Stops listening (connections refused) until `up()`. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
  /** The accepted entries' lines, stream by stream in arrival order. */
  lines(): string[];
}

export async function startFakeLoki(port = 0): Promise<FakeLoki> {
  const accepted: RecordedPush[] = [];
  const arrivals: Array<{ status: number; at: number }> = [];
  const script: ScriptedAnswer[] = [];
  let fallback: ScriptedAnswer | undefined;
  let server: Server | undefined;

  const listen = (p: number) =>
    new Promise<Server>((resolve, reject) => {
      const s = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const answer = script.shift() ?? fallback ?? { status: 204 };
          const reply = () => {
            arrivals.push({ status: answer.status, at: Date.now() });
            if (answer.status >= 200 && answer.status < 300) {
              const decoded = decodePushBody(Buffer.concat(chunks), req.headers['content-type'], req.headers['content-encoding'], 1 << 30);
              accepted.push({ headers: req.headers, streams: decoded.streams });
            }
            res.writeHead(answer.status, answer.headers ?? {});
            res.end(answer.body ?? '');
          };
          if (answer.delayMs) setTimeout(reply, answer.delayMs);
          else reply();
        });
      });
      s.once('error', reject);
      s.listen(p, '127.0.0.1', () => resolve(s));
    });

  server = await listen(port);
  const bound = (server.address() as AddressInfo).port;
  const closeServer = async () => {
    const s = server;
    server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  return {
    url: `http://127.0.0.1:${bound}/loki/api/v1/push`,
    port: bound,
    accepted,
    arrivals,
    script: (...answers) => script.push(...answers),
    answerAll: (answer) => {
      fallback = answer;
    },
    down: closeServer,
    async up() {
      if (!server) server = await listen(bound);
    },
    close: closeServer,
    lines: () => accepted.flatMap((p) => p.streams.flatMap((s) => s.entries.map((e) => e.line))),
  };
}
