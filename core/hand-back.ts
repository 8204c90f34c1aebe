/**
 * A sender that acknowledges its input only once the stages sent it on (`SendOptions.untilSentOn`,
 * a JetStream reader) can take back what the stages still hold of its batches when it stops: an
 * open multiline block is then dropped instead of flushed in part, its messages are not
 * acknowledged, and the next owner reads them again and completes the block. Flushed at the stop,
 * the block's first part went out alone and its remaining lines, read by the next owner, came out
 * as a second, orphaned part.
 *
 * A sender that ends a session keeping what it sent (a partition handed over to another member
 * while the process runs on) ends the hand-back instead: stages send on at once what they hold of
 * its batches — no more lines will come from it, and waiting for `max_wait_time` would hold the
 * hand-over up while other input keeps the pipeline busy (see core/input-time.ts).
 */

/** What a sender passes with its batches (`SendOptions.handBack`) and requests when it stops. */
export class HandBack {
  private taken = false;
  private ended = false;
  private readonly listeners = new Set<() => void>();
  private readonly endListeners = new Set<() => void>();

  /** Whether the sender has taken its held input back. */
  get requested(): boolean {
    return this.taken;
  }

  /** Takes back what is still held: stages drop it, and sends waiting for it fail with `HandedBackError`. */
  request(): void {
    if (this.taken) return;
    this.taken = true;
    const listeners = [...this.listeners];
    this.listeners.clear();
    for (const listener of listeners) listener();
  }

  /** The sender sends nothing more and keeps what it sent: stages send on what they hold of it now. */
  end(): void {
    if (this.ended || this.taken) return;
    this.ended = true;
    const listeners = [...this.endListeners];
    this.endListeners.clear();
    for (const listener of listeners) listener();
  }

  /** Hears the end (at once if it came); returns what stops listening. */
  onEnd(listener: () => void): () => void {
    if (this.ended) {
      listener();
      return () => {};
    }
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  /** Hears the request (at once if it was made); returns what stops listening. */
  onRequest(listener: () => void): () => void {
    if (this.taken) {
      listener();
      return () => {};
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** A send's entries were held by a stage when their sender took them back: they were not sent on. */
export class HandedBackError extends Error {
  constructor() {
    super('entries held by a stage were handed back to their sender');
    this.name = 'HandedBackError';
  }
}
