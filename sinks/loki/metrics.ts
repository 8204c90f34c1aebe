/**
 * Metrics of logs.write: the reference writer's `loki_write_*` families renamed `logs_write_*`,
 * with the same label names (`host` is the endpoint URL's host). They are registered once per
 * registry and shared by every instance; each series also carries the instance's `component_id`,
 * the label the reference's runtime adds to every component metric.
 */
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
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

export const writeMetrics: (registry: Registry) => WriteMetrics = perRegistry((_registry, make) => {
  const metrics: WriteMetrics = {
    encodedBytes: make.counter(
      'logs_write_encoded_bytes_total',
      'Bytes of encoded push bodies (protobuf, before compression) prepared for sending.',
      ['component_id', 'host'],
    ),
    sentBytes: make.counter('logs_write_sent_bytes_total', 'Bytes of log lines delivered to the endpoint.', ['component_id', 'host']),
    droppedBytes: make.counter('logs_write_dropped_bytes_total', 'Bytes of log lines given up on, by reason.', [
      'component_id',
      'host',
      'reason',
      'tenant',
    ]),
    sentEntries: make.counter('logs_write_sent_entries_total', 'Log entries delivered to the endpoint.', ['component_id', 'host']),
    droppedEntries: make.counter('logs_write_dropped_entries_total', 'Log entries given up on, by reason.', [
      'component_id',
      'host',
      'reason',
      'tenant',
    ]),
    requestDuration: make.histogram('logs_write_request_duration_seconds', 'Time taken by each push request, by HTTP status code.', [
      'component_id',
      'status_code',
      'host',
    ]),
    batchRetries: make.counter('logs_write_batch_retries_total', 'Push attempts that failed and were retried.', [
      'component_id',
      'host',
      'tenant',
    ]),
    queuedBytes: make.gauge('logs_write_queued_bytes', 'Bytes of log lines accepted and not yet sent or dropped.', [
      'component_id',
      'host',
    ]),
    walBytes: make.gauge('logs_write_wal_bytes', 'Bytes of the write-ahead log files kept for the endpoint.', ['component_id', 'host']),
    walLostEntries: make.counter(
      'logs_write_wal_lost_entries_total',
      'Entries kept in the write-ahead log and given up because they could not be read back, by reason (damaged, truncated, undecodable).',
      ['component_id', 'host', 'reason'],
    ),
  };
  return metrics;
});
