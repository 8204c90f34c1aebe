import { makeCapsule, type Capsule } from '../lib/config/evaluate.js';
import type { ProfileLabels } from '../lib/pyroscope/labels.js';

/**
 * The shared vocabulary of profile components: what a profile is on its way through the graph and
 * the receiver interface `forward_to` lists hold.
 */

/** One raw profile of a push series: the bytes as the profiler sent them (usually gzipped pprof). */
export interface RawSample {
  readonly id: string;
  readonly rawProfile: Uint8Array;
}

/** The profiles of one label set, as one Push series carries them. */
export interface PushSeries {
  readonly labels: ProfileLabels;
  readonly samples: readonly RawSample[];
}

/**
 * A profile that arrived on the legacy ingest API. Nothing in it is parsed: the body and query
 * travel on exactly as received, and `labels` are what the `name` parameter yielded.
 */
export interface IngestProfile {
  /** The request body; shared between receivers, so never modified. */
  readonly body: Uint8Array;
  /** Every `Content-Type` header value of the request, in order (often one, possibly none). */
  readonly contentType: readonly string[];
  /** The request path (`/ingest`). */
  readonly path: string;
  /** The raw query string without `?`, exactly as received. */
  readonly rawQuery: string;
  readonly labels: ProfileLabels;
}

/**
 * Where profile components send profiles (the reference's Appender). Both calls resolve once the
 * profile is delivered and reject with the reason it was not. `signal` carries the caller's
 * cancellation and, when it has one, its deadline (see `deadlineOf`).
 */
export interface ProfilesReceiver {
  /** One series of a Push request; the writer sends it as its own Push. */
  append(series: PushSeries, signal: AbortSignal): Promise<void>;
  /** One ingest request, forwarded as it came. */
  appendIngest(profile: IngestProfile, signal: AbortSignal): Promise<void>;
}

export const PROFILES_RECEIVER = 'profiles.receiver';

/** Wraps a receiver as the opaque value a config exports (`profiles.write.default.receiver`). */
export function profilesReceiverCapsule(receiver: ProfilesReceiver): Capsule {
  return makeCapsule(PROFILES_RECEIVER, receiver);
}
