/**
 * Metrics of logs.source.api, registered once per registry and shared by every instance; each
 * series carries the instance's `component_id`, the label the reference's runtime adds to every
 * component metric.
 */
import type { Counter, Gauge, Registry } from 'prom-client';
import { perRegistry } from '../../core/metrics.js';

export interface SourceApiMetrics {
  /** Requests answered, by route and status code. */
  readonly requests: Counter<'component_id' | 'route' | 'status_code'>;
  /** Entries taken over by the receivers. */
  readonly entries: Counter<'component_id'>;
  /** Pushes refused, by reason (bad bodies, full queue, …). */
  readonly rejected: Counter<'component_id' | 'reason'>;
  /** Decompressed bytes of pushes admitted and not yet acknowledged downstream. */
  readonly pendingBytes: Gauge<'component_id'>;
  /** Admitted TCP connections, as the reference's server counts them. */
  readonly connections: Gauge<'component_id' | 'protocol'>;
  readonly connectionsLimit: Gauge<'component_id' | 'protocol'>;
}

export const sourceApiMetrics: (registry: Registry) => SourceApiMetrics = perRegistry((_registry, make) => {
  const metrics: SourceApiMetrics = {
    requests: make.counter('logs_source_api_requests_total', 'Requests answered by the log push API, by route and status code.', [
      'component_id',
      'route',
      'status_code',
    ]),
    entries: make.counter('logs_source_api_entries_total', 'Log entries received and taken over by the receivers in forward_to.', [
      'component_id',
    ]),
    rejected: make.counter('logs_source_api_rejected_requests_total', 'Push requests refused, by reason.', ['component_id', 'reason']),
    pendingBytes: make.gauge(
      'logs_source_api_pending_bytes',
      'Decompressed bytes of pushes admitted and not yet taken over by the receivers.',
      ['component_id'],
    ),
    connections: make.gauge('logs_source_api_tcp_connections', 'Current number of accepted TCP connections.', ['component_id', 'protocol']),
    connectionsLimit: make.gauge(
      'logs_source_api_tcp_connections_limit',
      'The max number of TCP connections that can be accepted (0 means no limit).',
      ['component_id', 'protocol'],
    ),
  };
  return metrics;
});
