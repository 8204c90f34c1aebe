/**
 * Metrics of logs.write: the reference writer's `loki_write_*` families renamed `logs_write_*`,
 * with the same label names (`host` is the endpoint URL's host). They are registered once per
 * registry and shared by every instance; each series also carries the instance's `component_id`,
 * the label the reference's runtime adds to every component metric.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { perRegistry } from '../../core/metrics.js';

/** Why entries were given up; the `reason` label of the dropped counters. */
export type DropReason = 'ingester_error' | 'rate_limited' | 'shutdown';

export interface WriteMetrics {
  readonly encodedBytes: Counter<'component_id' | 'host'>;
  readonly sentBytes: Counter<'component_id' | 'host'>;
  readonly droppedBytes: Counter<'component_id' | 'host' | 'reason' | 'tenant'>;
  readonly sentEntries: Counter<'component_id' | 'host'>;
  readonly droppedEntries: Counter<'component_id' | 'host' | 'reason' | 'tenant'>;
  readonly requestDuration: Histogram<'component_id' | 'status_code' | 'host'>;
  readonly batchRetries: Counter<'component_id' | 'host' | 'tenant'>;
  /** Bytes of lines waiting in an endpoint's queue or in flight. */
  readonly queuedBytes: Gauge<'component_id' | 'host'>;
  /** Bytes of an endpoint's write-ahead log files. */
  readonly walBytes: Gauge<'component_id' | 'host'>;
  /** Entries acknowledged into an endpoint's write-ahead log and given up because they could not be read back. */
  readonly walLostEntries: Counter<'component_id' | 'host' | 'reason'>;
}

export const writeMetrics: (registry: Registry) => WriteMetrics = perRegistry((registry) => {
  const registers = [registry];
  const metrics: WriteMetrics = {
    encodedBytes: new Counter({
      name: 'logs_write_encoded_bytes_total',
      help: 'Bytes of encoded push bodies (protobuf, before compression) prepared for sending.',
      labelNames: ['component_id', 'host'],
      registers,
    }),
    sentBytes: new Counter({
      name: 'logs_write_sent_bytes_total',
      help: 'Bytes of log lines delivered to the endpoint.',
      labelNames: ['component_id', 'host'],
      registers,
    }),
    droppedBytes: new Counter({
      name: 'logs_write_dropped_bytes_total',
      help: 'Bytes of log lines given up on, by reason.',
      labelNames: ['component_id', 'host', 'reason', 'tenant'],
      registers,
    }),
    sentEntries: new Counter({
      name: 'logs_write_sent_entries_total',
      help: 'Log entries delivered to the endpoint.',
      labelNames: ['component_id', 'host'],
      registers,
    }),
    droppedEntries: new Counter({
      name: 'logs_write_dropped_entries_total',
      help: 'Log entries given up on, by reason.',
      labelNames: ['component_id', 'host', 'reason', 'tenant'],
      registers,
    }),
    requestDuration: new Histogram({
      name: 'logs_write_request_duration_seconds',
      help: 'Time taken by each push request, by HTTP status code.',
      labelNames: ['component_id', 'status_code', 'host'],
      registers,
    }),
    batchRetries: new Counter({
      name: 'logs_write_batch_retries_total',
      help: 'Push attempts that failed and were retried.',
      labelNames: ['component_id', 'host', 'tenant'],
      registers,
    }),
    queuedBytes: new Gauge({
      name: 'logs_write_queued_bytes',
      help: 'Bytes of log lines accepted and not yet sent or dropped.',
      labelNames: ['component_id', 'host'],
      registers,
    }),
    walBytes: new Gauge({
      name: 'logs_write_wal_bytes',
      help: 'Bytes of the write-ahead log files kept for the endpoint.',
      labelNames: ['component_id', 'host'],
      registers,
    }),
    walLostEntries: new Counter({
      name: 'logs_write_wal_lost_entries_total',
      help: 'Entries kept in the write-ahead log and given up because they could not be read back, by reason (damaged, truncated, undecodable).',
      labelNames: ['component_id', 'host', 'reason'],
      registers,
    }),
  };
  return metrics;
});
