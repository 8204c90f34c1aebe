/**
 * Metrics of logs.source.api, registered once per registry and shared by every instance; each
 * series carries the instance's `component_id`, the label the reference's runtime adds to every
 * component metric.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
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

export const sourceApiMetrics: (registry: Registry) => SourceApiMetrics = perRegistry((registry) => {
  const registers = [registry];
  const metrics: SourceApiMetrics = {
    requests: new Counter({
      name: 'logs_source_api_requests_total',
      help: 'Requests answered by the log push API, by route and status code.',
      labelNames: ['component_id', 'route', 'status_code'],
      registers,
    }),
    entries: new Counter({
      name: 'logs_source_api_entries_total',
      help: 'Log entries received and taken over by the receivers in forward_to.',
      labelNames: ['component_id'],
      registers,
    }),
    rejected: new Counter({
      name: 'logs_source_api_rejected_requests_total',
      help: 'Push requests refused, by reason.',
      labelNames: ['component_id', 'reason'],
      registers,
    }),
    pendingBytes: new Gauge({
      name: 'logs_source_api_pending_bytes',
      help: 'Decompressed bytes of pushes admitted and not yet taken over by the receivers.',
      labelNames: ['component_id'],
      registers,
    }),
    connections: new Gauge({
      name: 'logs_source_api_tcp_connections',
      help: 'Current number of accepted TCP connections.',
      labelNames: ['component_id', 'protocol'],
      registers,
    }),
    connectionsLimit: new Gauge({
      name: 'logs_source_api_tcp_connections_limit',
      help: 'The max number of TCP connections that can be accepted (0 means no limit).',
      labelNames: ['component_id', 'protocol'],
      registers,
    }),
  };
  return metrics;
});
