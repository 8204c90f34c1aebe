/**
 * perRegistry: every component's metric families are made once per prom-client registry, so its
 * instances sharing a registry count in the same families and a second instance does not collide
 * with the first's registration.
 */
import fc from 'fast-check';
import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { flowCounters } from '../../core/inspect/flow-counters.js';
import { perRegistry, processMetrics } from '../../core/metrics.js';
import { sourceFileMetrics } from '../../receivers/file/metrics.js';
import { jetStreamSourceMetrics } from '../../receivers/jetstream/metrics.js';
import { sourceApiMetrics } from '../../receivers/loki/metrics.js';
import { jetStreamWriteMetrics } from '../../sinks/jetstream/metrics.js';
import { writeMetrics } from '../../sinks/loki/metrics.js';

const familyNames = async (registry: Registry): Promise<string[]> => (await registry.getMetricsAsJSON()).map((family) => family.name);

describe('perRegistry', () => {
  it('makes the families on the first call for a registry and hands the same ones back after', async () => {
    const made: Registry[] = [];
    const pushes = perRegistry((registry) => {
      made.push(registry);
      return new Counter({ name: 'pushes_total', help: 'Pushes.', registers: [registry] });
    });
    const registry = new Registry();

    const first = pushes(registry);
    first.inc(2);
    pushes(registry).inc(3);

    expect(pushes(registry)).toBe(first);
    expect(made).toEqual([registry]);
    expect(await familyNames(registry)).toEqual(['pushes_total']);
    expect((await first.get()).values).toEqual([{ value: 5, labels: {} }]);
  });

  it('makes separate families for each registry', async () => {
    const pushes = perRegistry((registry) => new Counter({ name: 'pushes_total', help: 'Pushes.', registers: [registry] }));
    const a = new Registry();
    const b = new Registry();

    pushes(a).inc(1);
    pushes(b).inc(7);

    expect(pushes(a)).not.toBe(pushes(b));
    expect(await a.metrics()).toContain('pushes_total 1\n');
    expect(await b.metrics()).toContain('pushes_total 7\n');
  });

  it('hands create a maker whose counters, gauges and histograms are registered on the registry with their label names', async () => {
    const families = perRegistry((_registry, make) => ({
      counter: make.counter('made_total', 'Made.', ['kind']),
      gauge: make.gauge('made_level', 'Level.'),
      histogram: make.histogram('made_seconds', 'Took.', ['kind']),
    }));
    const registry = new Registry();
    const { counter, gauge, histogram } = families(registry);
    counter.inc({ kind: 'a' }, 2);
    gauge.set(7);
    histogram.observe({ kind: 'b' }, 0.2);
    const text = await registry.metrics();
    expect(text).toContain('# HELP made_total Made.\n# TYPE made_total counter\nmade_total{kind="a"} 2\n');
    expect(text).toContain('# HELP made_level Level.\n# TYPE made_level gauge\nmade_level 7\n');
    expect(text).toContain('made_seconds_bucket{le="0.25",kind="b"} 1\n');
    expect(text).toContain('made_seconds_sum{kind="b"} 0.2\nmade_seconds_count{kind="b"} 1\n');
    expect(() => counter.inc({ other: 'x' } as never)).toThrow('Added label "other" is not included in initial labelset');
  });

  it('keeps what it made even when that is falsy', () => {
    let calls = 0;
    const nothing = perRegistry(() => {
      calls++;
      return undefined;
    });
    const registry = new Registry();
    nothing(registry);
    nothing(registry);
    expect(calls).toBe(1);
  });

  it('calls create exactly once per distinct registry, whatever the order of the calls', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 4 }), { maxLength: 40 }), (picks) => {
        const registries = Array.from({ length: 5 }, () => new Registry());
        const made = new Map<Registry, number>();
        const memo = perRegistry((registry) => {
          made.set(registry, (made.get(registry) ?? 0) + 1);
          return { registry };
        });
        for (const pick of picks) expect(memo(registries[pick]!).registry).toBe(registries[pick]);
        expect([...made.keys()].sort((x, y) => registries.indexOf(x) - registries.indexOf(y))).toEqual(
          [...new Set(picks)].sort((x, y) => x - y).map((pick) => registries[pick]),
        );
        expect([...made.values()].every((count) => count === 1)).toBe(true);
      }),
    );
  });
});

describe("components' metric families", () => {
  it.each([
    [
      'processMetrics',
      processMetrics,
      ['logs_process_dropped_lines_total', 'logs_process_dropped_lines_by_label_total', 'logs_process_truncated_fields_total'],
    ],
    ['flowCounters', flowCounters, ['rivulet_component_received_entries_total', 'rivulet_component_sent_entries_total']],
    [
      'sourceFileMetrics',
      sourceFileMetrics,
      [
        'logs_source_file_read_lines_total',
        'logs_source_file_read_bytes_total',
        'logs_source_file_file_bytes_total',
        'logs_source_file_files_active_total',
        'logs_source_file_dropped_entries_total',
        'logs_source_file_dropped_bytes_total',
        'logs_source_file_mutated_entries_total',
        'logs_source_file_mutated_bytes_total',
      ],
    ],
    [
      'sourceApiMetrics',
      sourceApiMetrics,
      [
        'logs_source_api_requests_total',
        'logs_source_api_entries_total',
        'logs_source_api_rejected_requests_total',
        'logs_source_api_pending_bytes',
        'logs_source_api_tcp_connections',
        'logs_source_api_tcp_connections_limit',
      ],
    ],
    [
      'writeMetrics',
      writeMetrics,
      [
        'logs_write_encoded_bytes_total',
        'logs_write_sent_bytes_total',
        'logs_write_dropped_bytes_total',
        'logs_write_sent_entries_total',
        'logs_write_dropped_entries_total',
        'logs_write_request_duration_seconds',
        'logs_write_batch_retries_total',
        'logs_write_queued_bytes',
        'logs_write_wal_bytes',
        'logs_write_wal_lost_entries_total',
      ],
    ],
    [
      'jetStreamSourceMetrics',
      jetStreamSourceMetrics,
      [
        'logs_source_jetstream_received_messages_total',
        'logs_source_jetstream_received_entries_total',
        'logs_source_jetstream_acked_messages_total',
        'logs_source_jetstream_malformed_messages_total',
        'logs_source_jetstream_terminated_messages_total',
        'logs_source_jetstream_redelivered_messages_total',
        'logs_source_jetstream_forward_failures_total',
        'logs_source_jetstream_owned_partitions',
        'logs_source_jetstream_partition_changes_total',
      ],
    ],
    [
      'jetStreamWriteMetrics',
      jetStreamWriteMetrics,
      [
        'logs_write_jetstream_published_entries_total',
        'logs_write_jetstream_published_messages_total',
        'logs_write_jetstream_published_bytes_total',
        'logs_write_jetstream_duplicate_messages_total',
        'logs_write_jetstream_retried_entries_total',
        'logs_write_jetstream_failed_entries_total',
        'logs_write_jetstream_in_flight_messages',
      ],
    ],
  ] as const)('%s registers its families once per registry', async (_name, families: (registry: Registry) => unknown, names) => {
    const registry = new Registry();
    const first = families(registry);
    expect(families(registry)).toBe(first);
    expect(families(new Registry())).not.toBe(first);
    expect(await familyNames(registry)).toEqual(names);
  });
});
