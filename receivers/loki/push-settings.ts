/**
 * The settings of a Loki push receiver: the attributes logs.source.api and the programmatic
 * `lokiPushReceiver` share (everything but `forward_to` and the `http` block), their schema, and
 * the one decoding that turns them into what the push routes read. A config block and a
 * programmatic options object go through the same checks and get the same error texts; only a
 * block gives them positions.
 */
import { t, type FieldSpec, type FieldsValues } from '../../lib/config/schema.js';
import type { PushAppSettings } from './decode-step.js';

/**
 * Entries one push may carry by default. A 1 MiB batch, the usual client default, holds at most
 * about 60,000 entries of one-byte lines; 100,000 decoded entries are estimated at about 40 MiB,
 * within the default `max_pending_size`.
 */
const DEFAULT_MAX_ENTRIES_PER_PUSH = 100_000;

/** The schema of the shared attributes, in the order the docs list them. */
export const PUSH_FIELDS = {
  labels: { kind: t.map(t.string), default: {}, doc: 'Labels added to every entry; they win over pushed labels.' },
  use_incoming_timestamp: { kind: t.bool, default: false, doc: 'Keep the timestamps sent by the client instead of the receive time.' },
  graceful_shutdown_timeout: { kind: t.durationMs, default: 30_000_000_000n, doc: 'How long stopping waits for requests in flight.' },
  max_body_size: {
    kind: t.bytes,
    min: 1,
    default: '100MiB',
    doc: 'Largest request body accepted, before and after decompression; larger ones are answered 413.',
  },
  max_pending_size: {
    kind: t.bytes,
    min: 1,
    default: '64MiB',
    doc: 'Most memory held at once by pushes being read, decoded and waiting for receivers to take entries over (bodies, plus 400 bytes and the text of each decoded entry); a push beyond it is answered 429, one that cannot fit even alone 413.',
  },
  max_entries_per_push: {
    kind: t.int,
    min: 1,
    default: DEFAULT_MAX_ENTRIES_PER_PUSH,
    doc: 'Most entries in one push; a push with more is answered 413 as soon as decoding reaches one more.',
  },
  max_label_names_per_series: {
    kind: t.int,
    min: 0,
    default: 0,
    doc: "Most label names a pushed stream may have (Loki's limit of the same name); 0 turns the check off.",
  },
  max_label_name_length: {
    kind: t.int,
    min: 0,
    default: 0,
    doc: "Longest label name of a pushed stream, in bytes (Loki's limit of the same name); 0 turns the check off.",
  },
  max_label_value_length: {
    kind: t.int,
    min: 0,
    default: 0,
    doc: "Longest label value of a pushed stream, in bytes (Loki's limit of the same name); 0 turns the check off.",
  },
  max_line_size: {
    kind: t.bytes,
    default: '0',
    doc: 'Longest pushed line (Loki\'s limit of the same name), such as "256KiB"; 0 turns the check off.',
  },
} satisfies Record<string, FieldSpec>;

/** The shared attributes as decoded: sizes in bytes, the grace period in milliseconds, counts checked. */
export type PushValues = FieldsValues<typeof PUSH_FIELDS>;

/** The decoded shared attributes. */
export interface PushSettings {
  /** How long a stop waits for the pushes in flight. */
  readonly graceMs: number;
  /** What the routes read on every request. */
  readonly app: PushAppSettings;
  readonly maxPendingBytes: number;
}

/** What the push routes and the source run on, from the decoded shared attributes. */
export function pushSettingsOf(values: PushValues): PushSettings {
  return {
    graceMs: values.graceful_shutdown_timeout,
    app: {
      labels: values.labels,
      useIncomingTimestamp: values.use_incoming_timestamp,
      maxBodyBytes: values.max_body_size,
      maxEntriesPerPush: values.max_entries_per_push,
      limits: {
        maxLabelNamesPerSeries: values.max_label_names_per_series,
        maxLabelNameLength: values.max_label_name_length,
        maxLabelValueLength: values.max_label_value_length,
        maxLineSize: values.max_line_size,
      },
    },
    maxPendingBytes: values.max_pending_size,
  };
}
