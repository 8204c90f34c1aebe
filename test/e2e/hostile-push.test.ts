/**
 * `rivulet run` as a child process with two push sources: hostile pushes to one (bodies under
 * 1 MiB that decode into millions of entries) are answered 413 within 2 s, the process stays
 * under 1 GiB of resident memory, and the other source answers a normal push meanwhile.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipJsonEntriesBomb, snappyEmptyEntriesBomb } from '../receivers/loki/hostile.js';
import { pushJson, rawRequest, type RawResponse } from '../receivers/loki/harness.js';
import { spawnRun, type ChildRun } from './support.js';

const GiB = 1 << 30;

function config(echoFile: string): string {
  const source = (name: string) => `logs.source.api "${name}" {
  http {
    listen_address = "127.0.0.1"
    listen_port = 0
  }
  forward_to = [logs.echo.out.receiver]
}
`;
  return `${source('victim')}
${source('bystander')}
logs.echo "out" {
  path = ${JSON.stringify(echoFile)}
}
`;
}

/** The child's peak resident set so far (Linux), in bytes. */
function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  if (!kib) throw new Error('no VmHWM in /proc/<pid>/status');
  return Number(kib) * 1024;
}

/** The value of the victim's pending-bytes gauge on the run server's metrics page. */
async function victimPendingBytes(runUrl: string): Promise<number> {
  const text = await (await fetch(`${runUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('logs_source_api_pending_bytes{') && l.includes('component_id="logs.source.api.victim"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe.skipIf(process.platform !== 'linux')('rivulet run under hostile pushes', () => {
  let run: ChildRun;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-hostile-'));
    const file = join(dir, 'run.alloy');
    writeFileSync(file, config(join(dir, 'echo.jsonl')));
    run = await spawnRun(file, ['logs.source.api.victim', 'logs.source.api.bystander']);
  }, 90_000);

  afterAll(() => {
    if (run?.child.exitCode === null) run.child.kill('SIGKILL');
  });

  const bombs = [
    {
      name: 'a snappy protobuf push of 10.5 million empty entries',
      body: () => snappyEmptyEntriesBomb(),
      headers: { 'Content-Type': 'application/x-protobuf' },
      answer: 'push has more than 100000 entries, the limit of max_entries_per_push\n',
    },
    {
      name: 'a gzipped JSON push of 5 million ["0",""] entries',
      body: () => gzipJsonEntriesBomb(),
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      answer: 'push is too large to decode within max_pending_size (67108864 bytes), even with nothing else pending\n',
    },
  ];

  for (const bomb of bombs) {
    it(`answers ${bomb.name} 413 within 2 s under 1 GiB, answering the other source meanwhile`, { timeout: 60_000 }, async () => {
      const body = bomb.body();
      expect(body.length).toBeLessThan(1 << 20);
      const victim = run.apiUrls.get('logs.source.api.victim')!;
      const bystander = run.apiUrls.get('logs.source.api.bystander')!;
      const pid = run.child.pid!;

      const sentAt = performance.now();
      let bombAt = 0;
      const bombed = rawRequest(`${victim}/loki/api/v1/push`, { headers: bomb.headers, body }).then((res: RawResponse) => {
        bombAt = performance.now();
        return res;
      });
      // Once the victim holds the body, a normal push to the other source.
      const deadline = Date.now() + 10_000;
      while (bombAt === 0 && (await victimPendingBytes(run.runUrl)) === 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 5));
      const normalSentAt = performance.now();
      const normal = await pushJson(bystander, { streams: [{ stream: { job: 'normal' }, values: [['1', 'hello']] }] });
      const normalAt = performance.now();
      const answer = await bombed;

      expect({ status: answer.status, body: answer.body }).toEqual({ status: 413, body: bomb.answer });
      expect(bombAt - sentAt).toBeLessThan(2000);
      expect(normal.status).toBe(204);
      expect(normalAt).toBeLessThan(bombAt);
      expect(peakRss(pid)).toBeLessThan(GiB);
      if (process.env.SHOW_FIGURES)
        console.log({
          bomb: bomb.name,
          answeredMs: Math.round(bombAt - sentAt),
          normalPushMs: Math.round(normalAt - normalSentAt),
          peakRssMiB: Math.round(peakRss(pid) / (1 << 20)),
        });
    });
  }
});
