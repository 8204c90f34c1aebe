import { describe, expect, it } from 'vitest';
import { checksLabels, labelViolation, lineViolation, type IngestLimits } from '../../../receivers/loki/ingest-limits.js';

const NO_INGEST_LIMITS: IngestLimits = { maxLabelNamesPerSeries: 0, maxLabelNameLength: 0, maxLabelValueLength: 0, maxLineSize: 0 };

const limits = (over: Partial<IngestLimits>): IngestLimits => ({ ...NO_INGEST_LIMITS, ...over });
const quoted = () => '{b="2", a="1"}';

describe("Loki's ingest limits", () => {
  it('are all off by default', () => {
    const labels = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`name_${'n'.repeat(2000)}_${i}`, 'v'.repeat(5000)]));
    expect(checksLabels(NO_INGEST_LIMITS)).toBe(false);
    expect(labelViolation(labels, quoted, NO_INGEST_LIMITS)).toBeUndefined();
    expect(lineViolation('x'.repeat(1 << 20), quoted, NO_INGEST_LIMITS)).toBeUndefined();
  });

  it('count label names per stream, quoting the stream as written', () => {
    expect(labelViolation({ b: '2', a: '1' }, quoted, limits({ maxLabelNamesPerSeries: 2 }))).toBeUndefined();
    expect(labelViolation({ b: '2', a: '1', c: '3' }, quoted, limits({ maxLabelNamesPerSeries: 2 }))).toEqual({
      reason: 'max_label_names_per_series',
      message: `entry for stream '{b="2", a="1"}' has 3 label names; limit 2`,
    });
  });

  it('measure names and values in bytes and name the first too long one in sorted order', () => {
    const both = limits({ maxLabelNameLength: 4, maxLabelValueLength: 4 });
    expect(labelViolation({ zzzzz: '1', b: 'ééé' }, quoted, both)).toEqual({
      reason: 'label_value_too_long',
      message: `stream '{b="2", a="1"}' has label value too long: 'ééé'`,
    });
    expect(labelViolation({ zzzzz: '1', b: 'éé' }, quoted, both)).toEqual({
      reason: 'label_name_too_long',
      message: `stream '{b="2", a="1"}' has label name too long: 'zzzzz'`,
    });
    expect(labelViolation({ abcd: 'wxyz' }, quoted, both)).toBeUndefined();
  });

  it('measure lines in bytes', () => {
    const max = limits({ maxLineSize: 5 });
    expect(lineViolation('héllo', quoted, max)).toEqual({
      reason: 'line_too_long',
      message: `Max entry size '5' bytes exceeded for stream '{b="2", a="1"}' while adding an entry with length '6' bytes`,
    });
    expect(lineViolation('hello', quoted, max)).toBeUndefined();
  });
});
