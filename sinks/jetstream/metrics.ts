/** The metric families of logs.write.jetstream, registered once per registry. */
import type { Counter, Gauge, Registry } from 'prom-client';
import { perRegistry } from '../../core/metrics.js';

export interface JetStreamWriteMetrics {
  readonly publishedEntries: Counter<'component_id'>;
  readonly publishedMessages: Counter<'component_id'>;
  readonly publishedBytes: Counter<'component_id'>;
  readonly duplicateMessages: Counter<'component_id'>;
  readonly retriedEntries: Counter<'component_id' | 'reason'>;
  readonly failedEntries: Counter<'component_id' | 'reason'>;
  readonly inFlightMessages: Gauge<'component_id'>;
}

export const jetStreamWriteMetrics: (registry: Registry) => JetStreamWriteMetrics = perRegistry((_registry, make) => {
  const metrics: JetStreamWriteMetrics = {
    publishedEntries: make.counter('logs_write_jetstream_published_entries_total', 'Log entries JetStream acknowledged as stored.', [
      'component_id',
    ]),
    publishedMessages: make.counter(
      'logs_write_jetstream_published_messages_total',
      'Messages JetStream acknowledged as stored (each carries entries of one stream).',
      ['component_id'],
    ),
    publishedBytes: make.counter('logs_write_jetstream_published_bytes_total', 'Bytes of encoded messages JetStream acknowledged.', [
      'component_id',
    ]),
    duplicateMessages: make.counter(
      'logs_write_jetstream_duplicate_messages_total',
      'Repeated publishes JetStream recognised by message id and stored only once.',
      ['component_id'],
    ),
    retriedEntries: make.counter(
      'logs_write_jetstream_retried_entries_total',
      'Entries whose publish failed and was tried again, by reason.',
      ['component_id', 'reason'],
    ),
    failedEntries: make.counter(
      'logs_write_jetstream_failed_entries_total',
      'Entries given up on after the last retry, by reason; their send was rejected.',
      ['component_id', 'reason'],
    ),
    inFlightMessages: make.gauge('logs_write_jetstream_in_flight_messages', 'Messages published and waiting for their acknowledgement.', [
      'component_id',
    ]),
  };
  return metrics;
});
