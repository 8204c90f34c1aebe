/**
 * The part of a push that follows reading its body: decompress, decode, turn the streams into
 * entries and hand them on. The push routes (push-app.ts) read the body and answer the client;
 * this step runs between, in place on the thread that serves HTTP, or on a shard thread of a
 * sharded run (core/shards), where the main thread hands the body off and answers with what the
 * shard answered. Either way the texts and codes of its refusals are the same.
 *
 * What the step holds (decompressed bodies, decoded streams at an estimated size) is admitted into
 * the request's claim as it grows, so `max_pending_size` bounds it; the decoded streams stay
 * claimed until the entries are taken over.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Entry, Labels, MetadataPair } from '../../core/entry.js';
import { copyMap, TENANT_LABEL } from '../../core/entry.js';
import type { InputBacklog } from '../../core/input-time.js';
import { RetryLaterError, type SendOptions } from '../../core/receiver.js';
import type { BodyAnswer, BodyClaim, BodyRequest, ShardFront } from '../../core/shard-context.js';
import type { Log } from '../../lib/log.js';
import { formatLabelText } from '../../lib/loki/label-text.js';
import type { WireEntry } from '../../lib/loki/wire.js';
import { PushError, type DecodedPush, type RejectReason } from './decoded-push.js';
import { checksLabels, labelViolation, lineViolation, type IngestLimits } from './ingest-limits.js';
import { PendingClaim, SharedPendingBytes, type Admission, type PendingBytes } from './pending.js';
import { bodyFormat, decodeContentEncodingAsync, pushBodySteps, rawBodySteps } from './push-body.js';
import { RETRY_AFTER_SECONDS } from '../http/body.js';

/** What the app reads from its component on every request, so updates apply at once. */
export interface PushAppSettings {
  readonly labels: Labels;
  readonly useIncomingTimestamp: boolean;
  readonly maxBodyBytes: number;
  /** Most entries in one push; past it the push is answered 413. */
  readonly maxEntriesPerPush: number;
  readonly limits: IngestLimits;
}

/** Entries turned into forwarded entries between two turns of the event loop. */
const ENTRY_SLICE = 1024;

/** Why part of a push was skipped; the push is answered 400 with the last one. */
export interface Skipped {
  readonly reason: RejectReason;
  readonly message: string;
}

/** What the step needs to know of a request besides its body. */
export interface PushHead {
  readonly kind: 'push' | 'raw';
  readonly contentType?: string;
  readonly contentEncoding?: string;
  /** `X-Scope-OrgID`, trimmed; empty without one. */
  readonly tenant: string;
}

/** How many entries were handed on, and the part skipped (answered 400 once they are). */
export interface PushTaken {
  readonly entries: number;
  readonly violation?: Skipped;
}

/**
 * Decodes a body read whole and hands its entries on. Throws a PushError for a push refused as
 * a whole (none of its entries handed on).
 */
export type DecodeStep = (body: Buffer, head: PushHead, claim: PendingClaim) => Promise<PushTaken>;

export interface DecodeStepOptions {
  readonly settings: () => PushAppSettings;
  /** Hands entries on; resolves once they are taken over, rejects with the reason they were not. */
  readonly forward: (entries: Entry[], options: SendOptions) => Promise<void>;
  /** Held from the body's arrival until its entries are handed on (see PushAppOptions.backlog). */
  readonly backlog: InputBacklog;
  /** Receive time in nanoseconds, used unless `use_incoming_timestamp` is set. */
  readonly nowNs: () => bigint;
  /** Shows what the bound holds now (the pending-bytes gauge). */
  readonly showPending: () => void;
  readonly log: Log;
}

/** The step run where the body was read (or on the shard it was handed to). */
export function decodeStep(options: DecodeStepOptions): DecodeStep {
  return async (raw, head, claim) => {
    const settings = options.settings();
    const release = options.backlog.hold();
    let queued: (() => void) | undefined = release;
    try {
      const decoded = await decodeBody(raw, head, settings, claim);
      // The bodies are garbage now; what stays alive is the decoded streams.
      claim.shrinkTo(decoded.bytes);
      options.showPending();
      const { entries, violation } = await toEntries(decoded, head.kind === 'raw' ? undefined : settings, settings.limits, head.tenant);
      if (entries.length > 0) {
        try {
          const forwarded = options.forward(entries, { backlog: options.backlog });
          // Pushed into the receiver: no longer waiting here.
          release();
          queued = undefined;
          await forwarded;
        } catch (err) {
          if (err instanceof RetryLaterError)
            throw new PushError(429, 'receiver_full', `${err.message}, retry after ${RETRY_AFTER_SECONDS}s`);
          options.log('error', 'forwarding pushed entries failed', { error: (err as Error).message });
          throw new PushError(500, 'forward_failed', `forwarding entries failed: ${(err as Error).message}`);
        }
      }
      return violation === undefined ? { entries: entries.length } : { entries: entries.length, violation };
    } finally {
      queued?.();
    }
  };

  /** Decompresses and decodes, admitting every byte the request grows by into `claim` before it is kept. */
  async function decodeBody(raw: Buffer, head: PushHead, settings: PushAppSettings, claim: PendingClaim): Promise<DecodedPush> {
    const maxBody = settings.maxBodyBytes;
    const admit = (bytes: number): void => {
      const refused = refusal(claim.take(bytes), claim.pending);
      if (refused) throw refused;
    };
    const body = await decodeContentEncodingAsync(raw, head.contentEncoding, maxBody, admit);
    options.showPending();
    const limits = { maxBytes: maxBody, maxEntries: settings.maxEntriesPerPush };
    const steps =
      head.kind === 'push' ? pushBodySteps(body, bodyFormat(head.contentType), limits) : rawBodySteps(body, settings.labels, limits);
    // Each step reports what the decode holds so far, the last one what its result holds; only
    // the growth is admitted, while the bodies are still held beside it.
    let admitted = 0;
    for (;;) {
      const step = steps.next();
      const holds = step.done ? step.value.bytes : step.value;
      if (holds > admitted) {
        admit(holds - admitted);
        admitted = holds;
      }
      options.showPending();
      if (step.done) return step.value;
      await nextTurn();
    }
  }

  async function toEntries(
    decoded: DecodedPush,
    settings: PushAppSettings | undefined,
    limits: IngestLimits,
    tenant: string,
  ): Promise<{ entries: Entry[]; violation?: Skipped }> {
    const entries: Entry[] = [];
    let violation: Skipped | undefined;
    const useIncoming = settings?.useIncomingTimestamp ?? false;
    for (const stream of decoded.streams) {
      if (stream.labels === undefined) {
        violation = { reason: 'invalid_labels', message: stream.labelError ?? 'invalid labels' };
        continue;
      }
      const pushedLabels = stream.labels;
      // Loki quotes the label set in its canonical form (as clients send it).
      const quoted = () => formatLabelText(pushedLabels);
      if (settings && checksLabels(limits)) {
        const broken = labelViolation(pushedLabels, quoted, limits);
        if (broken) {
          violation = broken;
          continue;
        }
      }
      const labels = settings ? streamLabels(pushedLabels, settings.labels) : { ...pushedLabels };
      if (tenant !== '') labels[TENANT_LABEL] = tenant;
      for (const entry of stream.entries) {
        if (limits.maxLineSize > 0) {
          const broken = lineViolation(entry.line, quoted, limits);
          if (broken) {
            violation = broken;
            continue;
          }
        }
        entries.push(toEntry(entry, labels, useIncoming));
        if (entries.length % ENTRY_SLICE === 0) await nextTurn();
      }
    }
    return violation === undefined ? { entries } : { entries, violation };
  }

  function toEntry(entry: WireEntry, labels: Labels, useIncoming: boolean): Entry {
    return {
      labels: copyMap(labels),
      line: entry.line,
      timestamp: useIncoming ? entry.timestampNs : options.nowNs(),
      // Decoding built these pairs for this entry alone, so the entry may own them.
      structuredMetadata: entry.structuredMetadata as MetadataPair[],
      extracted: {},
    };
  }
}

/** Why an admission refuses a request, if it does: 429 beside the others, 413 even alone. */
export function refusal(admission: Admission, pending: PendingBytes): PushError | undefined {
  if (admission === 'admitted') return undefined;
  if (admission === 'busy') return queueFull();
  return new PushError(
    413,
    'push_too_large',
    `push is too large to decode within max_pending_size (${pending.limit} bytes), even with nothing else pending`,
  );
}

export function queueFull(): PushError {
  return new PushError(429, 'queue_full', `too many entries waiting to be forwarded, retry after ${RETRY_AFTER_SECONDS}s`);
}

/** The stream's labels with the configured ones added (they win), minus reserved `__` labels. */
function streamLabels(stream: Labels, added: Labels): Labels {
  const merged: Labels = { ...stream, ...added };
  const out: Labels = {};
  for (const name of Object.keys(merged)) if (!name.startsWith('__')) out[name] = merged[name]!;
  return out;
}

/**
 * The step on the main thread of a sharded run: the body goes to a shard (its bytes transferred
 * when they fill their buffer, copied once when they are a view of a larger one), whose answer
 * comes back as the step's result or refusal. The body's claim goes with it: `pending` is shared
 * with the shards, and the shard's claim holds on to what this one admitted (and gives it back).
 */
export function handOffStep(front: ShardFront, componentId: string, pending: SharedPendingBytes): DecodeStep {
  return async (raw, head, claim) => {
    const whole = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength;
    const body = whole ? new Uint8Array(raw.buffer, 0, raw.byteLength) : new Uint8Array(raw);
    const answering = front.handOff(componentId, body, bodyRequestOf(head), { bound: pending.memory, held: claim.held });
    // The shard's claim holds these bytes from here. Had the shards stopped, nothing was posted
    // and the bytes stay counted, but the run stops with its shards.
    claim.handOver();
    const answer = await answering;
    const { error } = answer;
    if (error === undefined) return { entries: answer.entries };
    const reason = error.reason as RejectReason;
    // A push partly skipped is answered 400 once the rest is handed on, as in place.
    if (error.status === 400) return { entries: answer.entries, violation: { reason, message: error.message } };
    throw new PushError(error.status, reason, error.message);
  };
}

/**
 * The shard's side: runs `step` on a body handed off to it, under the body's claim on the bound it
 * shares with the main thread (holding on to what the main thread admitted for the body), and
 * answers what the main thread answers the client with. The claim is given back once the answer
 * is known.
 */
export async function takeHandedOff(step: DecodeStep, body: Uint8Array, request: BodyRequest, handed: BodyClaim): Promise<BodyAnswer> {
  const claim = new PendingClaim(new SharedPendingBytes(handed.bound), handed.held);
  try {
    const taken = await step(Buffer.from(body.buffer, body.byteOffset, body.byteLength), headOf(request), claim);
    const { violation } = taken;
    if (violation === undefined) return { entries: taken.entries };
    return { entries: taken.entries, error: { status: 400, reason: violation.reason, message: violation.message } };
  } catch (err) {
    if (err instanceof PushError) return { entries: 0, error: { status: err.status, reason: err.reason, message: err.message } };
    return { entries: 0, error: { status: 500, reason: 'forward_failed', message: (err as Error).message } };
  } finally {
    claim.release();
  }
}

function bodyRequestOf(head: PushHead): BodyRequest {
  return {
    kind: head.kind,
    tenant: head.tenant,
    ...(head.contentType === undefined ? {} : { contentType: head.contentType }),
    ...(head.contentEncoding === undefined ? {} : { contentEncoding: head.contentEncoding }),
  };
}

function headOf(request: BodyRequest): PushHead {
  return {
    kind: request.kind === 'raw' ? 'raw' : 'push',
    tenant: request.tenant ?? '',
    ...(request.contentType === undefined ? {} : { contentType: request.contentType }),
    ...(request.contentEncoding === undefined ? {} : { contentEncoding: request.contentEncoding }),
  };
}
