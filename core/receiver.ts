import { cloneEntry, type Entry } from './entry.js';
import { makeCapsule, type Capsule } from '../lib/config/evaluate.js';
import type { HandBack } from './hand-back.js';
import type { InputBacklog } from './input-time.js';

/**
 * Where a component sends log entries. `send` resolves once the receiver has taken the entries
 * over (queued them in its own pipeline or written them out): that acknowledgement is what lets
 * sources answer their clients only after nothing can be lost in between.
 *
 * The receiver owns the entries it is sent and may change them (logs.process runs its stages on
 * them in place), so a sender hands over entries it will not read again: `fanOut` gives every
 * receiver but the last its own copies.
 */
export interface LogsReceiver {
  /** Resolves once the receiver has taken the entries over (see `SendOptions` for how far). */
  send(entries: readonly Entry[], options?: SendOptions): Promise<void>;
}

export interface SendOptions {
  /**
   * Resolve only once every entry of this batch that a stage held back (a multiline block still
   * open) has been sent on, for a source that acknowledges its input upstream only then. Such a
   * send may take as long as the longest hold (a block's `max_wait_time`).
   */
  readonly untilSentOn?: boolean;
  /**
   * The sender's input received and not yet sent: while it waits, a receiver's stages do not take
   * their input for idle (a multiline block is not flushed by `max_wait_time`; see
   * core/input-time.ts).
   */
  readonly backlog?: InputBacklog;
  /**
   * With `untilSentOn`: when the sender requests it (it stops), stages drop what they still hold
   * of its batches rather than flush it, and those sends fail with `HandedBackError`, so the
   * sender gives that input back for a next reader to complete (see core/hand-back.ts).
   */
  readonly handBack?: HandBack;
}

export const LOGS_RECEIVER = 'logs.receiver';

/** Wraps a receiver as the opaque value a config exports (`logs.echo.default.receiver`). */
export function logsReceiverCapsule(receiver: LogsReceiver): Capsule {
  return makeCapsule(LOGS_RECEIVER, receiver);
}

/**
 * Sends entries to every receiver in list order, each receiver getting its own copies so no
 * receiver can observe another's edits. Resolves when all have accepted.
 */
export async function fanOut(receivers: readonly LogsReceiver[], entries: readonly Entry[], options?: SendOptions): Promise<void> {
  if (entries.length === 0) return;
  for (let i = 0; i < receivers.length; i++) {
    const last = i === receivers.length - 1;
    await receivers[i]!.send(last ? entries : entries.map(cloneEntry), options);
  }
}

/**
 * Thrown by a receiver's `send` that cannot take entries over for now but will later by itself
 * (its storage is full): none of the batch was taken over by that receiver, and a source should
 * answer its client "retry later" (HTTP 429 with `Retry-After`) rather than report a failure.
 */
export class RetryLaterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RetryLaterError';
  }
}
