/**
 * Metrics of logs.source.file, registered once per registry and shared by every instance: the
 * reference file source's `loki_source_file_*` family under this project's prefix, each series
 * carrying the instance's `component_id`; and for `max_line_size`, the counters the reference's
 * client keeps for lines over it (`dropped_*` and `mutated_*`, reason `line_too_long`).
 */
import type { Counter, Gauge, Registry } from 'prom-client';
import { perRegistry } from '../../core/metrics.js';

export interface SourceFileMetrics {
  /** Lines read and taken over by the receivers, by file. */
  readonly readLines: Counter<'component_id' | 'path'>;
  /** The offset read up to (and taken over) in each file. */
  readonly readBytes: Gauge<'component_id' | 'path'>;
  /** The size of each file when last looked at. */
  readonly fileBytes: Gauge<'component_id' | 'path'>;
  /** Files being tailed. */
  readonly filesActive: Gauge<'component_id'>;
  /** Lines over max_line_size dropped, and their bytes, by file (reason `line_too_long`). */
  readonly droppedEntries: Counter<'component_id' | 'path' | 'reason'>;
  readonly droppedBytes: Counter<'component_id' | 'path' | 'reason'>;
  /** Lines over max_line_size truncated, and the bytes cut off, by file (reason `line_too_long`). */
  readonly mutatedEntries: Counter<'component_id' | 'path' | 'reason'>;
  readonly mutatedBytes: Counter<'component_id' | 'path' | 'reason'>;
}

export const sourceFileMetrics: (registry: Registry) => SourceFileMetrics = perRegistry((_registry, make) => {
  const metrics: SourceFileMetrics = {
    readLines: make.counter('logs_source_file_read_lines_total', 'Number of lines read.', ['component_id', 'path']),
    readBytes: make.gauge('logs_source_file_read_bytes_total', 'Number of bytes read.', ['component_id', 'path']),
    fileBytes: make.gauge('logs_source_file_file_bytes_total', 'Number of bytes total.', ['component_id', 'path']),
    filesActive: make.gauge('logs_source_file_files_active_total', 'Number of active files.', ['component_id']),
    droppedEntries: make.counter('logs_source_file_dropped_entries_total', 'Number of lines dropped for being longer than max_line_size.', [
      'component_id',
      'path',
      'reason',
    ]),
    droppedBytes: make.counter(
      'logs_source_file_dropped_bytes_total',
      'Number of bytes of the lines dropped for being longer than max_line_size.',
      ['component_id', 'path', 'reason'],
    ),
    mutatedEntries: make.counter('logs_source_file_mutated_entries_total', 'Number of lines truncated to max_line_size.', [
      'component_id',
      'path',
      'reason',
    ]),
    mutatedBytes: make.counter('logs_source_file_mutated_bytes_total', 'Number of bytes cut off lines truncated to max_line_size.', [
      'component_id',
      'path',
      'reason',
    ]),
  };
  return metrics;
});
