import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { rawRequest, recordingReceiver, startReceiveHttp, type StartedReceiver } from './harness.js';

let running: StartedReceiver[] = [];
afterEach(async () => {
  await Promise.all(running.map((r) => r.stop()));
  running = [];
});

async function gaugeValue(started: StartedReceiver, name: string): Promise<number> {
  const metric = started.registry.getSingleMetric(name)!;
  return (await metric.get()).values.find((v) => v.labels.component_id === 'profiles.receive_http.test')?.value ?? NaN;
}

describe('conn_limit', () => {
  it('serves 20 concurrent slow connections four at a time without refusing any', async () => {
    const receiver = recordingReceiver({ delayMs: 120 });
    const started = await startReceiveHttp([receiver], { http: 'conn_limit = 4' });
    running.push(started);
    expect(await gaugeValue(started, 'profiles_receive_http_tcp_connections_limit')).toBe(4);

    let maxSeen = 0;
    let maxWaiting = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxSeen = Math.max(maxSeen, await gaugeValue(started, 'profiles_receive_http_tcp_connections'));
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const waitingProbe = setInterval(() => {
      maxWaiting = Math.max(maxWaiting, (started.component as unknown as { server: { waiting(): number } }).server.waiting());
    }, 2);

    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        rawRequest(`${started.url}/ingest?name=client${i}`, { headers: { connection: 'close' }, body: `body ${i}` }),
      ),
    );
    sampling = false;
    clearInterval(waitingProbe);
    await sampler;

    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(receiver.ingests).toHaveLength(20);
    expect(maxSeen).toBe(4);
    expect(maxWaiting).toBeGreaterThan(0);
    expect(await gaugeValue(started, 'profiles_receive_http_tcp_connections_limit')).toBe(4);
  });

  it('keeps an idle connection beyond the limit waiting, unrefused, until a slot frees', async () => {
    const started = await startReceiveHttp([recordingReceiver()], { http: 'conn_limit = 1' });
    running.push(started);
    const { port } = new URL(started.url);
    const holder = connect(Number(port), '127.0.0.1');
    await new Promise((r) => holder.once('connect', r));
    for (let i = 0; i < 50 && (await gaugeValue(started, 'profiles_receive_http_tcp_connections')) < 1; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(await gaugeValue(started, 'profiles_receive_http_tcp_connections')).toBe(1);

    let answered = false;
    const waiting = rawRequest(`${started.url}/ingest?name=late`, { body: 'x' }).then((res) => {
      answered = true;
      return res;
    });
    await new Promise((r) => setTimeout(r, 150));
    expect(answered).toBe(false);
    expect(await gaugeValue(started, 'profiles_receive_http_tcp_connections')).toBe(1);

    holder.destroy();
    expect((await waiting).status).toBe(200);
  });

  it('defaults to 16384 and reads 0 when unlimited', async () => {
    const defaults = await startReceiveHttp([recordingReceiver()]);
    running.push(defaults);
    expect(await gaugeValue(defaults, 'profiles_receive_http_tcp_connections_limit')).toBe(16384);
    const unlimited = await startReceiveHttp([recordingReceiver()], { http: 'conn_limit = 0' });
    running.push(unlimited);
    expect(await gaugeValue(unlimited, 'profiles_receive_http_tcp_connections_limit')).toBe(0);
  });
});
