import { afterEach, describe, expect, it } from 'vitest';
import { gzipJsonEntriesBomb, snappyEmptyEntriesBomb } from './hostile.js';
import {
  eventually,
  metricValue,
  pushJson,
  rawRequest,
  recordingReceiver,
  startSourceApi,
  type RawResponse,
  type StartedSourceApi,
} from './harness.js';

const started: StartedSourceApi[] = [];
async function start(...args: Parameters<typeof startSourceApi>): Promise<StartedSourceApi> {
  const api = await startSourceApi(...args);
  started.push(api);
  return api;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((a) => a.stop()));
});

const MiB = 1 << 20;

/**
 * Sends `bomb` to one source and, once that source is busy with it, a normal push to another in
 * the same process; returns both answers, when each came, and the highest RSS seen meanwhile.
 */
async function bombBesideNormalPush(
  bomb: { body: Buffer; headers: Record<string, string> },
  extra = '',
): Promise<{ bomb: RawResponse; bombMs: number; normal: RawResponse; normalAt: number; bombAt: number; rssGrowth: number }> {
  const victim = await start([recordingReceiver()], { extra });
  const bystanderReceiver = recordingReceiver();
  const bystander = await start([bystanderReceiver]);
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 5);
  try {
    const sentAt = performance.now();
    let bombAt = 0;
    const bombed = rawRequest(`${victim.url}/loki/api/v1/push`, { headers: bomb.headers, body: bomb.body }).then((res) => {
      bombAt = performance.now();
      return res;
    });
    // The victim has admitted the body and is decompressing or decoding it.
    await eventually(
      async () => bombAt > 0 || (await metricValue(victim.ctx.registry, 'logs_source_api_pending_bytes')) > 0,
      5000,
      'the bomb',
    );
    let normalAt = 0;
    const normal = await pushJson(bystander.url, { streams: [{ stream: { job: 'normal' }, values: [['1', 'hello']] }] }).then((res) => {
      normalAt = performance.now();
      return res;
    });
    const answer = await bombed;
    expect(bystanderReceiver.entries.map((e) => e.line)).toEqual(['hello']);
    expect(await metricValue(victim.ctx.registry, 'logs_source_api_pending_bytes')).toBe(0);
    if (process.env.SHOW_FIGURES)
      console.log({ bombMs: bombAt - sentAt, normalMs: normalAt - sentAt, rssGrowthMiB: (rssPeak - rssBefore) / MiB });
    return { bomb: answer, bombMs: bombAt - sentAt, normal, normalAt, bombAt, rssGrowth: (rssPeak - rssBefore) / MiB };
  } finally {
    clearInterval(sampler);
  }
}

describe('logs.source.api under hostile pushes', () => {
  it('answers a snappy protobuf push of 10.5 million empty entries 413 within 2 s, while another source keeps answering', {
    timeout: 30_000,
  }, async () => {
    const body = snappyEmptyEntriesBomb();
    expect(body.length).toBeLessThan(MiB);
    const run = await bombBesideNormalPush({ body, headers: { 'Content-Type': 'application/x-protobuf' } });
    expect({ status: run.bomb.status, body: run.bomb.body }).toEqual({
      status: 413,
      body: 'push has more than 100000 entries, the limit of max_entries_per_push\n',
    });
    expect(run.bombMs).toBeLessThan(2000);
    expect(run.normal.status).toBe(204);
    expect(run.normalAt).toBeLessThan(run.bombAt);
    expect(run.rssGrowth).toBeLessThan(512);
  });

  it('answers an 85 KiB gzipped JSON push of 5 million ["0",""] entries 413 within 2 s, while another source keeps answering', {
    timeout: 30_000,
  }, async () => {
    const body = gzipJsonEntriesBomb();
    expect(body.length).toBeLessThan(100 << 10);
    const run = await bombBesideNormalPush({ body, headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' } });
    // 45 MB of JSON leave room for fewer than 100,000 decoded entries in the default 64 MiB.
    expect({ status: run.bomb.status, body: run.bomb.body }).toEqual({
      status: 413,
      body: 'push is too large to decode within max_pending_size (67108864 bytes), even with nothing else pending\n',
    });
    expect(run.bombMs).toBeLessThan(2000);
    expect(run.normal.status).toBe(204);
    expect(run.normalAt).toBeLessThan(run.bombAt);
    expect(run.rssGrowth).toBeLessThan(512);
  });

  it('refuses the protobuf bomb by its decoded size when the entry limit is lifted', { timeout: 30_000 }, async () => {
    const run = await bombBesideNormalPush(
      { body: snappyEmptyEntriesBomb(), headers: { 'Content-Type': 'application/x-protobuf' } },
      'max_entries_per_push = 100000000',
    );
    expect({ status: run.bomb.status, body: run.bomb.body }).toEqual({
      status: 413,
      body: 'push is too large to decode within max_pending_size (67108864 bytes), even with nothing else pending\n',
    });
    expect(run.bombMs).toBeLessThan(2000);
    expect(run.normal.status).toBe(204);
    expect(run.normalAt).toBeLessThan(run.bombAt);
    expect(run.rssGrowth).toBeLessThan(512);
  });
});
