import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { WireStream } from '../../../lib/loki/wire.js';
import { push, runConfig, type CommandRun } from './support.js';

const API = 'logs.source.api.in';
const HELD_SINK = fileURLToPath(new URL('./held-sink.mjs', import.meta.url));

/** Pushes every send of logs.held waits on: held until `release`, answered at once after it. */
async function startHold() {
  const held: ServerResponse[] = [];
  let releasing = false;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (releasing) res.writeHead(204).end();
      else held.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    held: () => held.length,
    release(): void {
      releasing = true;
      for (const res of held.splice(0)) res.writeHead(204).end();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const config = (holdUrl: string, maxPending: string) => `logs.source.api "in" {
  http {
    listen_address = "127.0.0.1"
    listen_port = 0
  }
  max_pending_size = ${JSON.stringify(maxPending)}
  graceful_shutdown_timeout = "1s"
  forward_to = [logs.held.h.receiver]
}

logs.held "h" {
  url = ${JSON.stringify(holdUrl)}
}
`;

/** One stream of twenty 100-byte lines: about 10 KiB decoded. */
function body(n: number): WireStream[] {
  return [
    {
      labels: `{app="held", push="${n % 10}"}`,
      entries: Array.from({ length: 20 }, (_, i) => ({
        timestampNs: 1_700_000_000_000_000_000n + BigInt(i),
        line: `${String(n % 10)} ${'x'.repeat(98)}`,
        structuredMetadata: [],
      })),
    },
  ];
}

async function pendingGauge(run: CommandRun): Promise<number> {
  const text = await (await fetch(`${run.runUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('logs_source_api_pending_bytes{') && l.includes(`component_id="${API}"`));
  return Number(line?.split(' ').pop());
}

async function waitFor(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('max_pending_size in a sharded run', () => {
  it('is one bound for the main thread and every shard: the same pushes held, the same 429, gauge and reload as in place', async () => {
    const seen: Record<string, string[]> = {};
    for (const [mode, flags] of [
      ['inPlace', ['--workers', '1']],
      ['sharded', ['--shards', '2']],
    ] as const) {
      const hold = await startHold();
      const run = await runConfig(config(hold.url, '64KiB'), [...flags, '--stages', HELD_SINK], [API]);
      const log: string[] = [];
      seen[mode] = log;
      const answers: Promise<{ status: number; text: string }>[] = [];
      try {
        const url = run.apiUrls.get(API)!;
        /** Pushes one after another, each held before the next, until one is refused; logs them. */
        const fill = async () => {
          for (let n = 0; n < 40; n++) {
            const before = hold.held();
            let answered: { status: number; text: string; retryAfter: string | null } | undefined;
            const answer = push(url, body(n)).then((a) => (answered = a));
            await waitFor(() => answered !== undefined || hold.held() > before, 'the push held or answered');
            if (answered) {
              log.push(`refused after ${hold.held()} held: ${answered.status} ${answered.retryAfter} ${answered.text.trim()}`);
              log.push(`gauge ${await pendingGauge(run)}`);
              return;
            }
            answers.push(answer);
            // Decoded on a shard, which leaves the gauge to the main thread's reading of the bound.
            if (hold.held() === 1) log.push(`gauge with one held ${await pendingGauge(run)}`);
          }
        };
        await fill();
        // A larger bound, read by the main thread and every shard alike, admits more.
        writeFileSync(run.file, config(hold.url, '96KiB'));
        run.signals.emit('SIGHUP');
        await waitFor(() => run.stderr().includes('msg="config reloaded"'), 'the reload');
        await fill();
        hold.release();
        const statuses = (await Promise.all(answers)).map((a) => a.status);
        log.push(`held pushes answered ${[...new Set(statuses)].join(',')} (${statuses.length})`);
        log.push(`gauge after release ${await pendingGauge(run)}`);
        const again = await push(url, body(0));
        log.push(`after release: ${again.status}`);
        const tooLarge = await push(url, [
          ...body(0),
          ...body(1),
          ...body(2),
          ...body(3),
          ...body(4),
          ...body(5),
          ...body(6),
          ...body(7),
          ...body(8),
          ...body(9),
        ]);
        log.push(`alone too large: ${tooLarge.status} ${tooLarge.text.trim()}`);
      } finally {
        hold.release();
        await run.stop();
        await hold.close();
      }
    }
    // Six pushes of 10,660 decoded bytes fill 64 KiB (a seventh would pass it while decoding), nine 96 KiB.
    expect(seen.inPlace).toEqual([
      'gauge with one held 10660',
      'refused after 6 held: 429 1 too many entries waiting to be forwarded, retry after 1s',
      'gauge 63960',
      'refused after 9 held: 429 1 too many entries waiting to be forwarded, retry after 1s',
      'gauge 95940',
      'held pushes answered 204 (9)',
      'gauge after release 0',
      'after release: 204',
      'alone too large: 413 push is too large to decode within max_pending_size (98304 bytes), even with nothing else pending',
    ]);
    expect(seen.sharded).toEqual(seen.inPlace);
  }, 120_000);
});
