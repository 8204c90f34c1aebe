/** The metric families of logs.write.jetstream, registered once per registry. */
import { Counter, Gauge, type Registry } from 'prom-client';
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

export const jetStreamWriteMetrics: (registry: Registry) => JetStreamWriteMetrics = perRegistry((registry) => {
  const registers = [registry];
  const metrics: JetStreamWriteMetrics = {
    publishedEntries: new Counter({
      name: 'logs_write_jetstream_published_entries_total',
      help: 'Log entries JetStream acknowledged as stored.',
      labelNames: ['component_id'],
      registers,
    }),
    publishedMessages: new Counter({
      name: 'logs_write_jetstream_published_messages_total',
      help: 'Messages JetStream acknowledged as stored (each carries entries of one stream).',
      labelNames: ['component_id'],
      registers,
    }),
    publishedBytes: new Counter({
      name: 'logs_write_jetstream_published_bytes_total',
      help: 'Bytes of encoded messages JetStream acknowledged.',
      labelNames: ['component_id'],
      registers,
    }),
    duplicateMessages: new Counter({
      name: 'logs_write_jetstream_duplicate_messages_total',
      help: 'Repeated publishes JetStream recognised by message id and stored only once.',
      labelNames: ['component_id'],
      registers,
    }),
    retriedEntries: new Counter({
      name: 'logs_write_jetstream_retried_entries_total',
      help: 'Entries whose publish failed and was tried again, by reason.',
      labelNames: ['component_id', 'reason'],
      registers,
    }),
    failedEntries: new Counter({
      name: 'logs_write_jetstream_failed_entries_total',
      help: 'Entries given up on after the last retry, by reason; their send was rejected.',
      labelNames: ['component_id', 'reason'],
      registers,
    }),
    inFlightMessages: new Gauge({
      name: 'logs_write_jetstream_in_flight_messages',
      help: 'Messages published and waiting for their acknowledgement.',
      labelNames: ['component_id'],
      registers,
    }),
  };
  return metrics;
});
