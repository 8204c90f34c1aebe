/**
 * The settings of a Loki push receiver: the attributes logs.source.api and the programmatic
 * `lokiPushReceiver` share (everything but `forward_to` and the `http` block), their schema, and
 * the one decoding that turns them into what the push routes read. A config block and a
 * programmatic options object go through the same checks and get the same error texts; only a
 * block gives them positions.
 */
import type { Block } from '../../lib/config/ast.js';
import { ConfigError, ConfigErrors } from '../../lib/config/errors.js';
import { attributePos, byteSize, durationMs } from '../../lib/loki/config.js';
import type { Labels } from '../../core/entry.js';
import { t, type FieldSpec } from '../../lib/config/schema.js';
import type { IngestLimits } from './ingest-limits.js';
import type { PushAppSettings } from './push-app.js';

/**
 * Entries one push may carry by default. A 1 MiB batch, the usual client default, holds at most
 * about 60,000 entries of one-byte lines; 100,000 decoded entries are estimated at about 40 MiB,
 * within the default `max_pending_size`.
 */
const DEFAULT_MAX_ENTRIES_PER_PUSH = 100_000;

/** The schema of the shared attributes, in the order the docs list them. */
export const PUSH_FIELDS: Readonly<Record<string, FieldSpec>> = {
  labels: { kind: t.map(t.string), default: {}, doc: 'Labels added to every entry; they win over pushed labels.' },
  use_incoming_timestamp: { kind: t.bool, default: false, doc: 'Keep the timestamps sent by the client instead of the receive time.' },
  graceful_shutdown_timeout: { kind: t.duration, default: 30_000_000_000n, doc: 'How long stopping waits for requests in flight.' },
  max_body_size: {
    kind: t.string,
    default: '100MiB',
    doc: 'Largest request body accepted, before and after decompression; larger ones are answered 413.',
  },
  max_pending_size: {
    kind: t.string,
    default: '64MiB',
    doc: 'Most memory held at once by pushes being read, decoded and waiting for receivers to take entries over (bodies, plus 400 bytes and the text of each decoded entry); a push beyond it is answered 429, one that cannot fit even alone 413.',
  },
  max_entries_per_push: {
    kind: t.int,
    default: DEFAULT_MAX_ENTRIES_PER_PUSH,
    doc: 'Most entries in one push; a push with more is answered 413 as soon as decoding reaches one more.',
  },
  max_label_names_per_series: {
    kind: t.int,
    default: 0,
    doc: "Most label names a pushed stream may have (Loki's limit of the same name); 0 turns the check off.",
  },
  max_label_name_length: {
    kind: t.int,
    default: 0,
    doc: "Longest label name of a pushed stream, in bytes (Loki's limit of the same name); 0 turns the check off.",
  },
  max_label_value_length: {
    kind: t.int,
    default: 0,
    doc: "Longest label value of a pushed stream, in bytes (Loki's limit of the same name); 0 turns the check off.",
  },
  max_line_size: {
    kind: t.string,
    default: '0',
    doc: 'Longest pushed line (Loki\'s limit of the same name), such as "256KiB"; 0 turns the check off.',
  },
};

/** The decoded shared attributes. */
export interface PushSettings {
  /** How long a stop waits for the pushes in flight. */
  readonly graceMs: number;
  /** What the routes read on every request. */
  readonly app: PushAppSettings;
  readonly maxPendingBytes: number;
}

/** Runs a decoding step, keeping its config errors so every bad attribute is reported at once. */
export type Attempt = <T>(step: () => T, fallback: T) => T;

/**
 * Runs `decode` with an `attempt` that collects config errors, then throws them together. Any
 * other failure becomes a config error at the block (no position without one).
 */
export function collectingConfigErrors<T>(block: Block | undefined, path: readonly string[], decode: (attempt: Attempt) => T): T {
  try {
    const errors: ConfigError[] = [];
    const attempt: Attempt = (step, fallback) => {
      try {
        return step();
      } catch (err) {
        if (err instanceof ConfigErrors) errors.push(...err.errors);
        else if (err instanceof ConfigError) errors.push(err);
        else throw err;
        return fallback;
      }
    };
    const decoded = decode(attempt);
    if (errors.length > 0) throw new ConfigErrors(errors);
    return decoded;
  } catch (err) {
    if (err instanceof ConfigErrors || err instanceof ConfigError) throw err;
    throw new ConfigError((err as Error).message, block?.pos, path);
  }
}

/**
 * Decodes the shared attributes from `values` (a decoded block, or options with their defaults
 * applied), reporting every problem through `attempt`.
 */
export function pushSettingsOf(
  values: Readonly<Record<string, unknown>>,
  block: Block | undefined,
  path: readonly string[],
  attempt: Attempt,
): PushSettings {
  const maxBodyBytes = attempt(() => byteSize(values.max_body_size as string, 'max_body_size', block, path, 1), 0);
  const maxPendingBytes = attempt(() => byteSize(values.max_pending_size as string, 'max_pending_size', block, path, 1), 0);
  const count = (name: string, min: number): number =>
    attempt(() => {
      const value = values[name] as number;
      if (value < min) throw new ConfigError(`attribute "${name}": must be at least ${min}, got ${value}`, attributePos(block, name), path);
      return value;
    }, 0);
  const maxEntriesPerPush = count('max_entries_per_push', 1);
  const limits: IngestLimits = {
    maxLabelNamesPerSeries: count('max_label_names_per_series', 0),
    maxLabelNameLength: count('max_label_name_length', 0),
    maxLabelValueLength: count('max_label_value_length', 0),
    maxLineSize: attempt(() => byteSize(values.max_line_size as string, 'max_line_size', block, path, 0), 0),
  };
  return {
    graceMs: durationMs(values.graceful_shutdown_timeout),
    app: {
      labels: values.labels as Labels,
      useIncomingTimestamp: values.use_incoming_timestamp as boolean,
      maxBodyBytes,
      maxEntriesPerPush,
      limits,
    },
    maxPendingBytes,
  };
}
