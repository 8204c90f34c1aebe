/**
 * What a decoded push is, what it is estimated to hold in memory, and the error that refuses one.
 * Shared by the body decoders (JSON, protobuf, raw lines) and the app that admits and forwards.
 */
import type { Labels } from '../../core/entry.js';
import type { DecodeProgress, WireEntry } from '../../lib/loki/wire.js';

/** Why a push was refused; doubles as the `reason` label of the rejection counter. */
export type RejectReason =
  | 'unsupported_content_type'
  | 'unsupported_encoding'
  | 'body_too_large'
  | 'push_too_large'
  | 'too_many_entries'
  | 'bad_compression'
  | 'bad_protobuf'
  | 'bad_json'
  | 'invalid_utf8'
  | 'invalid_labels'
  | 'max_label_names_per_series'
  | 'label_name_too_long'
  | 'label_value_too_long'
  | 'line_too_long'
  | 'queue_full'
  | 'receiver_full'
  | 'forward_failed'
  | 'shutting_down'
  | 'read_failed';

/** A push refused as a whole: the HTTP status, the metric reason and the text answered. */
export class PushError extends Error {
  constructor(
    readonly status: number,
    readonly reason: RejectReason,
    message: string,
  ) {
    super(message);
    this.name = 'PushError';
  }
}

/** One decoded stream: its labels, or why they could not be read, and its entries. */
export interface PushedStream {
  readonly labels: Labels | undefined;
  readonly labelError?: string;
  readonly entries: readonly WireEntry[];
}

export interface DecodedPush {
  readonly streams: readonly PushedStream[];
  /** Estimated bytes of memory the decoded streams hold (see `decodedBytes`). */
  readonly bytes: number;
}

/**
 * Bytes counted for each decoded object beside the text it carries. An entry is built twice (as
 * it comes off the wire, then as the entry handed on, with its own copy of the label set):
 * measured at about 290 bytes with three labels; 400 leaves room for larger label sets.
 */
export const ENTRY_OVERHEAD_BYTES = 400;
/** A stream: its label set, parsed, and its entry list. */
export const STREAM_OVERHEAD_BYTES = 400;
/** One structured-metadata pair (the pair object and its slot). */
export const PAIR_OVERHEAD_BYTES = 100;

/**
 * The memory decoded objects are estimated to hold: a fixed overhead per stream, entry and
 * metadata pair plus the bytes of the text they carry. This, not the body size, is what bounds a
 * push of many tiny entries: ten million empty entries are 20 MiB on the wire and 4 GiB as objects.
 */
export function decodedBytes(progress: DecodeProgress): number {
  return (
    progress.streams * STREAM_OVERHEAD_BYTES +
    progress.entries * ENTRY_OVERHEAD_BYTES +
    progress.pairs * PAIR_OVERHEAD_BYTES +
    progress.bytes
  );
}
