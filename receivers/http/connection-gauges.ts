/**
 * A receiver's two connection gauges, as the reference's server keeps them: admitted connections,
 * and the `conn_limit` in force (0 = no limit). The listener resets them whenever it (re)starts,
 * so counts start from zero with the new limit, and removes the component's series when it stops.
 * Each component names its own metric families and labels.
 */
import type { Gauge } from 'prom-client';

export class ConnectionGauges {
  constructor(
    private readonly connectionsGauge: Gauge<string>,
    private readonly limitGauge: Gauge<string>,
    private readonly labels: Record<string, string>,
  ) {}

  /** A (re)started listener: connections from zero, the new limit. */
  reset(limit: number): void {
    this.connectionsGauge.set(this.labels, 0);
    this.limitGauge.set(this.labels, limit);
  }

  connections(count: number): void {
    this.connectionsGauge.set(this.labels, count);
  }

  /** Removes this component's series (it has stopped). */
  remove(): void {
    this.connectionsGauge.remove(this.labels);
    this.limitGauge.remove(this.labels);
  }
}
