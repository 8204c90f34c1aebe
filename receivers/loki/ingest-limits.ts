/**
 * Loki's ingest limits on pushed streams, each off (0) unless configured: label names per
 * stream, label name and value length, line size. Checked as Loki's distributor checks them, in
 * bytes, names in sorted order; a stream or entry that breaks one is skipped, the rest of the
 * push is forwarded, and the push is answered 400 with the last violation in Loki's words.
 * Unlike Loki, a `service_name` label is counted like any other (Loki discounts it because it
 * may add that label itself; nothing here adds it).
 */
import type { Labels } from '../../core/entry.js';

export interface IngestLimits {
  /** Most label names per stream (Loki's `max_label_names_per_series`); 0: no limit. */
  readonly maxLabelNamesPerSeries: number;
  /** Longest label name in bytes (Loki's `max_label_name_length`); 0: no limit. */
  readonly maxLabelNameLength: number;
  /** Longest label value in bytes (Loki's `max_label_value_length`); 0: no limit. */
  readonly maxLabelValueLength: number;
  /** Longest line in bytes (Loki's `max_line_size`); 0: no limit. */
  readonly maxLineSize: number;
}

/** A broken limit: Loki's reason and message. */
export interface Violation {
  readonly reason: 'max_label_names_per_series' | 'label_name_too_long' | 'label_value_too_long' | 'line_too_long';
  readonly message: string;
}

/** Whether any label limit is on (the per-stream check can be skipped otherwise). */
export function checksLabels(limits: IngestLimits): boolean {
  return limits.maxLabelNamesPerSeries > 0 || limits.maxLabelNameLength > 0 || limits.maxLabelValueLength > 0;
}

/** The first label limit `labels` break, in Loki's order; `stream` is the label set as quoted. */
export function labelViolation(labels: Labels, stream: () => string, limits: IngestLimits): Violation | undefined {
  const names = Object.keys(labels);
  if (limits.maxLabelNamesPerSeries > 0 && names.length > limits.maxLabelNamesPerSeries) {
    return {
      reason: 'max_label_names_per_series',
      message: `entry for stream '${stream()}' has ${names.length} label names; limit ${limits.maxLabelNamesPerSeries}`,
    };
  }
  if (limits.maxLabelNameLength <= 0 && limits.maxLabelValueLength <= 0) return undefined;
  for (const name of names.sort()) {
    if (exceeds(name, limits.maxLabelNameLength))
      return { reason: 'label_name_too_long', message: `stream '${stream()}' has label name too long: '${name}'` };
    const value = labels[name]!;
    if (exceeds(value, limits.maxLabelValueLength))
      return { reason: 'label_value_too_long', message: `stream '${stream()}' has label value too long: '${value}'` };
  }
  return undefined;
}

/** Whether `line` is over `max_line_size`, in Loki's words. */
export function lineViolation(line: string, stream: () => string, limits: IngestLimits): Violation | undefined {
  if (!exceeds(line, limits.maxLineSize)) return undefined;
  return {
    reason: 'line_too_long',
    message: `Max entry size '${limits.maxLineSize}' bytes exceeded for stream '${stream()}' while adding an entry with length '${Buffer.byteLength(line, 'utf8')}' bytes`,
  };
}

/** Whether `text` is longer than `max` UTF-8 bytes (never, when `max` is 0). */
function exceeds(text: string, max: number): boolean {
  if (max <= 0 || text.length * 3 <= max) return false;
  if (text.length > max) return true;
  return Buffer.byteLength(text, 'utf8') > max;
}
