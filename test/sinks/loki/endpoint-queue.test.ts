import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import type { Entry } from '../../../core/entry.js';
import { Fifo } from '../../../lib/fifo.js';
import { snappyDecode } from '../../../lib/loki/compression.js';
import { decodePushRequest } from '../../../lib/loki/wire.js';
import type { EndpointConfig } from '../../../sinks/loki/endpoint-config.js';
import { EndpointQueue } from '../../../sinks/loki/endpoint-queue.js';
import { writeMetrics } from '../../../sinks/loki/metrics.js';
import type { PushRequest, PushResult } from '../../../sinks/loki/transport.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const config: EndpointConfig = {
  url: 'http://loki.invalid/loki/api/v1/push',
  host: 'loki.invalid',
  name: 'test',
  headers: {},
  tenantId: '',
  remoteTimeoutMs: 10_000,
  batchWaitMs: 1000,
  batchSizeBytes: 1 << 20,
  minBackoffMs: 500,
  maxBackoffMs: 5 * 60_000,
  maxBackoffRetries: 10,
  retryOnHttp429: true,
  capacityBytes: 10 << 20,
  drainTimeoutMs: 15_000,
  secrets: [],
};

const entry = (line: string, tenant: string): Entry => ({
  labels: { app: 'a', __tenant_id__: tenant },
  line,
  timestamp: 1n,
  structuredMetadata: [],
  extracted: {},
});

/** A queue on a clock that never moves, whose endpoint answers 204 and records each push. */
function recordingQueue() {
  const pushes: Array<{ tenant: string | undefined; lines: string[] }> = [];
  const transport = async (request: PushRequest): Promise<PushResult> => {
    const streams = decodePushRequest(snappyDecode(request.body, 1 << 30));
    pushes.push({ tenant: request.headers['X-Scope-OrgID'], lines: streams.flatMap((s) => s.entries.map((e) => e.line)) });
    return { status: 204, message: '' };
  };
  const queue = new EndpointQueue({
    config,
    componentId: 'logs.write.test',
    externalLabels: () => ({}),
    clock: new ManualClock(),
    metrics: writeMetrics(new Registry()),
    transport,
    log: () => {},
    userAgent: 'test',
  });
  return { queue, pushes };
}

describe('EndpointQueue with many tenants', () => {
  it('forms each batch without scanning other tenants: queue operations per entry stay constant as tenants grow', async () => {
    const operationsFor = async (tenants: number) => {
      const shift = vi.spyOn(Fifo.prototype, 'shift');
      const unshiftAll = vi.spyOn(Fifo.prototype, 'unshiftAll');
      const { queue, pushes } = recordingQueue();
      // Two rounds over every tenant, so each batch holds one tenant's two entries.
      const entries = [0, 1].flatMap((round) => Array.from({ length: tenants }, (_, t) => entry(`${round}-${t}`, `t${t}`)));
      await queue.enqueue(entries);
      await queue.stop();
      expect(pushes).toHaveLength(tenants);
      expect(pushes[0]).toEqual({ tenant: 't0', lines: ['0-0', '1-0'] });
      expect(pushes[tenants - 1]).toEqual({ tenant: `t${tenants - 1}`, lines: [`0-${tenants - 1}`, `1-${tenants - 1}`] });
      const moved = unshiftAll.mock.calls.reduce((n, [items]) => n + items.length, 0);
      const operations = shift.mock.calls.length + moved;
      vi.restoreAllMocks();
      return operations / entries.length;
    };
    const few = await operationsFor(20);
    const many = await operationsFor(2000);
    // Every entry leaves its tenant's queue once and the arrival order once.
    expect(few).toBeLessThanOrEqual(2);
    expect(many).toBeLessThanOrEqual(2);
  });

  it("sends the oldest entry's tenant first, other tenants' entries keeping their places", async () => {
    const { queue, pushes } = recordingQueue();
    await queue.enqueue([entry('a1', 'a'), entry('b1', 'b'), entry('a2', 'a'), entry('c1', 'c'), entry('b2', 'b')]);
    await queue.enqueue([entry('c2', 'c'), entry('a3', 'a')]);
    await queue.stop();
    expect(pushes).toEqual([
      { tenant: 'a', lines: ['a1', 'a2', 'a3'] },
      { tenant: 'b', lines: ['b1', 'b2'] },
      { tenant: 'c', lines: ['c1', 'c2'] },
    ]);
  });
});

describe('EndpointQueue timing', () => {
  it("observes each push's duration on the queue's clock: the virtual time the endpoint took to answer", async () => {
    const clock = new ManualClock();
    const registry = new Registry();
    let requested: () => void = () => {};
    const pushed = new Promise<void>((resolve) => {
      requested = resolve;
    });
    const transport = (): Promise<PushResult> =>
      new Promise((resolve) => {
        clock.scheduler.schedule(() => resolve({ status: 204, message: '' }), 1_500);
        requested();
      });
    const queue = new EndpointQueue({
      config,
      componentId: 'logs.write.test',
      externalLabels: () => ({}),
      clock,
      metrics: writeMetrics(registry),
      transport,
      log: () => {},
      userAgent: 'test',
    });
    await queue.enqueue([entry('a1', 'a')]);
    const stopped = queue.stop();
    await pushed;
    clock.advanceBy(1_500);
    await stopped;
    const text = await registry.metrics();
    expect(text).toContain(
      'logs_write_request_duration_seconds_sum{component_id="logs.write.test",host="loki.invalid",status_code="204"} 1.5\n',
    );
    expect(text).toContain(
      'logs_write_request_duration_seconds_count{component_id="logs.write.test",host="loki.invalid",status_code="204"} 1\n',
    );
  });
});
