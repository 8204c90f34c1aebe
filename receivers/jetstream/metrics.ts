/** The metric families of logs.source.jetstream, registered once per registry. */
import type { Counter, Gauge, Registry } from 'prom-client';
import { perRegistry } from '../../core/metrics.js';

export interface JetStreamSourceMetrics {
  readonly receivedMessages: Counter<'component_id'>;
  readonly receivedEntries: Counter<'component_id'>;
  readonly ackedMessages: Counter<'component_id'>;
  readonly malformedMessages: Counter<'component_id'>;
  readonly terminatedMessages: Counter<'component_id' | 'reason'>;
  readonly redeliveredMessages: Counter<'component_id'>;
  readonly forwardFailures: Counter<'component_id'>;
  readonly ownedPartitions: Gauge<'component_id'>;
  readonly partitionChanges: Counter<'component_id' | 'change'>;
}

export const jetStreamSourceMetrics: (registry: Registry) => JetStreamSourceMetrics = perRegistry((_registry, make) => {
  const metrics: JetStreamSourceMetrics = {
    receivedMessages: make.counter('logs_source_jetstream_received_messages_total', 'Messages taken from JetStream and forwarded.', [
      'component_id',
    ]),
    receivedEntries: make.counter('logs_source_jetstream_received_entries_total', 'Log entries taken from JetStream and forwarded.', [
      'component_id',
    ]),
    ackedMessages: make.counter(
      'logs_source_jetstream_acked_messages_total',
      'Messages acknowledged to JetStream after the receivers took their entries over.',
      ['component_id'],
    ),
    malformedMessages: make.counter(
      'logs_source_jetstream_malformed_messages_total',
      'Messages that did not decode; they are logged and terminated so they are not delivered again.',
      ['component_id'],
    ),
    terminatedMessages: make.counter(
      'logs_source_jetstream_terminated_messages_total',
      'Messages terminated unread so they are not delivered again, by reason: malformed, too_many_entries.',
      ['component_id', 'reason'],
    ),
    redeliveredMessages: make.counter(
      'logs_source_jetstream_redelivered_messages_total',
      'Messages delivered again to the owner that already forwarded them (not forwarded twice).',
      ['component_id'],
    ),
    forwardFailures: make.counter(
      'logs_source_jetstream_forward_failures_total',
      'Batches a receiver refused; the partition is read again from its last acknowledgement.',
      ['component_id'],
    ),
    ownedPartitions: make.gauge('logs_source_jetstream_owned_partitions', 'Partitions this instance holds the lease of.', ['component_id']),
    partitionChanges: make.counter(
      'logs_source_jetstream_partition_changes_total',
      'Partition leases acquired, released for rebalancing, or lost (expired or taken).',
      ['component_id', 'change'],
    ),
  };
  return metrics;
});
