/**
 * The receiver's connection gauges. Instances share one registry, so every series carries the
 * component's id (and path), as the reference's runtime labels every component metric; the
 * `protocol` label is the reference's too (only its `http` side exists here).
 */
import type { Gauge, Registry } from 'prom-client';
import { perRegistry } from '../../core/metrics.js';
import { ConnectionGauges } from '../http/connection-gauges.js';

interface Families {
  readonly connections: Gauge<string>;
  readonly limit: Gauge<string>;
}

const LABELS = ['component_path', 'component_id', 'protocol'];

const familiesOf = perRegistry(
  (_registry, make): Families => ({
    connections: make.gauge('profiles_receive_http_tcp_connections', 'Current number of accepted TCP connections.', LABELS),
    limit: make.gauge(
      'profiles_receive_http_tcp_connections_limit',
      'The max number of TCP connections that can be accepted (0 means no limit).',
      LABELS,
    ),
  }),
);

/** The connection gauges of one receiver instance. */
export function connectionGauges(registry: Registry, componentId: string): ConnectionGauges {
  const families = familiesOf(registry);
  return new ConnectionGauges(families.connections, families.limit, { component_path: '/', component_id: componentId, protocol: 'http' });
}
