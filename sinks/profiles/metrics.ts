/**
 * The writer's metrics: bytes and profiles sent and dropped, retries, and latency by kind
 * (`push_total`, `push_endpoint`, `push_downstream`, and the `ingest_…` three), every series by
 * endpoint URL (`-` for whole calls). Instances share one registry, so series also carry the
 * component's id and path, as the reference's runtime labels every component metric.
 */
import type { Counter, Histogram, Registry } from 'prom-client';
import { type Clock, stopwatch, systemClock } from '../../core/clock.js';
import { perRegistry } from '../../core/metrics.js';

interface Families {
  readonly sentBytes: Counter<string>;
  readonly droppedBytes: Counter<string>;
  readonly sentProfiles: Counter<string>;
  readonly droppedProfiles: Counter<string>;
  readonly retries: Counter<string>;
  readonly latency: Histogram<string>;
}

const ENDPOINT_LABELS = ['component_path', 'component_id', 'endpoint'];

const familiesOf = perRegistry((_registry, make): Families => {
  const counter = (name: string, help: string) => make.counter(name, help, ENDPOINT_LABELS);
  return {
    sentBytes: counter('profiles_write_sent_bytes_total', 'Total number of compressed bytes sent to Pyroscope.'),
    droppedBytes: counter('profiles_write_dropped_bytes_total', 'Total number of compressed bytes dropped by Pyroscope.'),
    sentProfiles: counter('profiles_write_sent_profiles_total', 'Total number of profiles sent to Pyroscope.'),
    droppedProfiles: counter('profiles_write_dropped_profiles_total', 'Total number of profiles dropped by Pyroscope.'),
    retries: counter('profiles_write_retries_total', 'Total number of retries to Pyroscope.'),
    latency: make.histogram('profiles_write_latency', 'Write latency for sending profiles to pyroscope', [...ENDPOINT_LABELS, 'type']),
  };
});

export type LatencyType = 'push_total' | 'push_endpoint' | 'push_downstream' | 'ingest_total' | 'ingest_endpoint' | 'ingest_downstream';

/** The metrics of one writer instance. */
export class WriteMetrics {
  private readonly families: Families;
  private readonly base: Record<string, string>;

  /** Latencies are measured on `clock`, the component's (the real one by default). */
  constructor(
    registry: Registry,
    componentId: string,
    private readonly clock: Clock = systemClock(),
  ) {
    this.families = familiesOf(registry);
    this.base = { component_path: '/', component_id: componentId };
  }

  sent(endpoint: string, bytes: number, profiles: number): void {
    this.families.sentBytes.inc({ ...this.base, endpoint }, bytes);
    this.families.sentProfiles.inc({ ...this.base, endpoint }, profiles);
  }

  dropped(endpoint: string, bytes: number, profiles: number): void {
    this.families.droppedBytes.inc({ ...this.base, endpoint }, bytes);
    this.families.droppedProfiles.inc({ ...this.base, endpoint }, profiles);
  }

  retry(endpoint: string): void {
    this.families.retries.inc({ ...this.base, endpoint });
  }

  /** Starts a latency measurement; call the result when the measured work ends. */
  time(endpoint: string, type: LatencyType): () => void {
    const elapsed = stopwatch(this.clock);
    return () => this.families.latency.observe({ ...this.base, endpoint, type }, elapsed());
  }

  /** Removes this instance's series. */
  async remove(): Promise<void> {
    for (const family of Object.values(this.families) as Array<Counter<string> | Histogram<string>>) {
      const seen = new Set<string>();
      for (const { labels } of (await family.get()).values) {
        if (labels.component_id !== this.base.component_id) continue;
        const own: Record<string, string> = {};
        for (const name of [...ENDPOINT_LABELS, 'type']) if (labels[name] !== undefined) own[name] = String(labels[name]);
        const key = JSON.stringify(own);
        if (seen.has(key)) continue;
        seen.add(key);
        family.remove(own);
      }
    }
  }
}
