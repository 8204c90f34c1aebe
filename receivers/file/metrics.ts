/**
 * Metrics of logs.source.file, registered once per registry and shared by every instance: the
 * reference file source's `loki_source_file_*` family under this project's prefix, each series
 * carrying the instance's `component_id`.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface SourceFileMetrics {
  /** Lines read and taken over by the receivers, by file. */
  readonly readLines: Counter<'component_id' | 'path'>;
  /** The offset read up to (and taken over) in each file. */
  readonly readBytes: Gauge<'component_id' | 'path'>;
  /** The size of each file when last looked at. */
  readonly fileBytes: Gauge<'component_id' | 'path'>;
  /** Files being tailed. */
  readonly filesActive: Gauge<'component_id'>;
}

const byRegistry = new WeakMap<Registry, SourceFileMetrics>();

export function sourceFileMetrics(registry: Registry): SourceFileMetrics {
  let metrics = byRegistry.get(registry);
  if (metrics) return metrics;
  const registers = [registry];
  metrics = {
    readLines: new Counter({
      name: 'logs_source_file_read_lines_total',
      help: 'Number of lines read.',
      labelNames: ['component_id', 'path'],
      registers,
    }),
    readBytes: new Gauge({
      name: 'logs_source_file_read_bytes_total',
      help: 'Number of bytes read.',
      labelNames: ['component_id', 'path'],
      registers,
    }),
    fileBytes: new Gauge({
      name: 'logs_source_file_file_bytes_total',
      help: 'Number of bytes total.',
      labelNames: ['component_id', 'path'],
      registers,
    }),
    filesActive: new Gauge({
      name: 'logs_source_file_files_active_total',
      help: 'Number of active files.',
      labelNames: ['component_id'],
      registers,
    }),
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
