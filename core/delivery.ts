import { Observable, type Observer, type OperatorFunction, type Subscriber } from 'rxjs';
import type { Entry } from './entry.js';
import { fanOut, type LogsReceiver, type SendOptions } from './receiver.js';
import type { HandBack } from './hand-back.js';
import type { InputBacklog } from './input-time.js';

/**
 * The programmatic face of delivery with acknowledgement. A source is an Observable of batches;
 * each batch carries `ack`, which the subscriber calls once it has taken the entries over (queued
 * them in a pipeline, written them out), or `nack` with the reason it could not. The source waits
 * for that answer before it answers its own client (a push is answered 204 only after `ack`) or
 * moves on (a file's position is saved only after `ack`): that is both the delivery promise and
 * the back-pressure. A sink is the other end: a `LogsReceiver` (a `forward_to` target) that is also
 * an Observer of batches, acknowledging each one once it has taken it over.
 *
 * The config components are built on the same pieces: a source component subscribes to its
 * source and hands every batch to its `forward_to` receivers, a sink component exports its sink.
 */
export interface LogBatch {
  readonly entries: Entry[];
  /**
   * Asks the taker to acknowledge only once every entry of the batch that a stage held back (an
   * open multiline block) has been sent on, for a source that acknowledges upstream only then
   * (see `SendOptions`).
   */
  readonly untilSentOn?: boolean;
  /** The source's input received and not yet sent (see `SendOptions.backlog`). */
  readonly backlog?: InputBacklog;
  /** How the source takes back what stages still hold of the batch (see `SendOptions.handBack`). */
  readonly handBack?: HandBack;
  /** The entries are taken over: the source may answer its client, save its position. */
  ack(): void;
  /**
   * The entries were not taken over. A `RetryLaterError` tells the source to ask its client to
   * retry later (HTTP 429); any other error is a failure the source reports as such.
   */
  nack(error: unknown): void;
}

/**
 * A running source seen as an Observable of batches. Subscribing starts it (one subscriber at a
 * time); `stop()` stops it gracefully: it stops accepting, waits for the batches it emitted to be
 * answered, then completes. Unsubscribing tears it down at once, without that wait.
 */
export interface LogSource extends Observable<LogBatch> {
  stop(): Promise<void>;
}

/** What a source's start function returns: how to stop it gracefully. */
export interface SourceRun {
  /** Stops accepting input and resolves once everything it sent has been answered. */
  stop(): Promise<void>;
}

/**
 * Makes a `LogSource` from a start function that sends through a `LogsReceiver`: every `send`
 * becomes one emitted batch, and the send's promise settles with the subscriber's `ack`/`nack`.
 * `start` runs on subscribe; a send after unsubscribe (or before subscribe) is refused.
 */
export function logSource(start: (receiver: LogsReceiver) => SourceRun): LogSource {
  return ackedSource<LogBatch, { entries: readonly Entry[]; options: SendOptions | undefined }>(
    ({ entries, options }, ack, nack) => ({ entries: entries as Entry[], ...options, ack, nack }),
    (send) => start({ send: (entries, options) => send({ entries, options }) }),
  ) as LogSource;
}

/** An Observable of acknowledged values, with a graceful stop (see `LogSource`). */
export interface AckedSource<T> extends Observable<T> {
  stop(): Promise<void>;
}

/** Thrown into a source's send when nobody is subscribed to the source. */
export class SourceNotSubscribedError extends Error {
  constructor() {
    super('the source has no subscriber');
    this.name = 'SourceNotSubscribedError';
  }
}

/**
 * The general form of `logSource` for other kinds of values (profiles): `wrap` builds the emitted
 * value from what was sent and its two answers; `start` gets the send function.
 */
export function ackedSource<T, V>(
  wrap: (value: V, ack: () => void, nack: (error: unknown) => void) => T,
  start: (send: (value: V) => Promise<void>) => SourceRun,
): AckedSource<T> {
  let subscriber: Subscriber<T> | undefined;
  let run: SourceRun | undefined;
  const send = (value: V): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const target = subscriber;
      if (target === undefined || target.closed) {
        reject(new SourceNotSubscribedError());
        return;
      }
      let answered = false;
      const once =
        <A extends unknown[]>(fn: (...args: A) => void) =>
        (...args: A) => {
          if (answered) return;
          answered = true;
          fn(...args);
        };
      target.next(wrap(value, once(resolve), once(reject)));
    });
  const source = new Observable<T>((s) => {
    if (subscriber !== undefined) {
      s.error(new Error('a source takes one subscriber at a time'));
      return;
    }
    subscriber = s;
    const current = start(send);
    run = current;
    return () => {
      if (subscriber === s) subscriber = undefined;
      if (run === current) {
        run = undefined;
        current.stop().catch(() => {});
      }
    };
  }) as AckedSource<T>;
  source.stop = async () => {
    const current = run;
    const s = subscriber;
    if (current === undefined) return;
    run = undefined;
    await current.stop();
    s?.complete();
  };
  return source;
}

/**
 * A sink: a `LogsReceiver` (usable in another component's `forward_to`) and an Observer of
 * batches (`source.subscribe(sink)`), acknowledging each batch once it has taken it over. `stop()`
 * flushes and drains what it holds, as a stopping config component does; `complete()` does the
 * same when the source it is subscribed to completes.
 */
export interface LogSink extends LogsReceiver, Observer<LogBatch> {
  stop(): Promise<void>;
}

/** Makes a `LogSink` from a receiver and its graceful stop. */
export function logSink(receiver: LogsReceiver, stop: () => Promise<void>, onError?: (error: unknown) => void): LogSink {
  let stopped: Promise<void> | undefined;
  const stopOnce = () => {
    stopped ??= stop();
    return stopped;
  };
  return {
    send: (entries: readonly Entry[], options?: SendOptions) => receiver.send(entries, options),
    next: (batch: LogBatch) => {
      receiver.send(batch.entries, sendOptionsOf(batch)).then(batch.ack, batch.nack);
    },
    error: (error: unknown) => {
      onError?.(error);
      void stopOnce().catch(() => {});
    },
    complete: () => {
      void stopOnce().catch(() => {});
    },
    stop: stopOnce,
  };
}

/**
 * Hands every batch to each receiver in turn (each but the last getting copies, as `forward_to`
 * does), acknowledging it once all have taken it over, or refusing it with the first failure.
 * Emits each batch's entry count once it is acknowledged; completes when the source has completed
 * and every batch has been answered.
 */
export function sendTo(...receivers: LogsReceiver[]): OperatorFunction<LogBatch, number> {
  return (source) =>
    new Observable<number>((subscriber) => {
      let inFlight = 0;
      let ended = false;
      const settle = () => {
        inFlight--;
        if (ended && inFlight === 0) subscriber.complete();
      };
      const subscription = source.subscribe({
        next: (batch) => {
          inFlight++;
          fanOut(receivers, batch.entries, sendOptionsOf(batch)).then(
            () => {
              batch.ack();
              subscriber.next(batch.entries.length);
              settle();
            },
            (err: unknown) => {
              batch.nack(err);
              settle();
            },
          );
        },
        error: (err) => subscriber.error(err),
        complete: () => {
          ended = true;
          if (inFlight === 0) subscriber.complete();
        },
      });
      return () => subscription.unsubscribe();
    });
}

/**
 * Forwards every batch of a source to receivers, as a source component does with its
 * `forward_to`: `receivers()` is read for every batch so a reload's new list applies to the next
 * one. Returns the subscription's teardown.
 */
export function forwardBatches(source: Observable<LogBatch>, receivers: () => readonly LogsReceiver[]): () => void {
  const subscription = source.subscribe({
    next: (batch) => {
      fanOut(receivers(), batch.entries, sendOptionsOf(batch)).then(batch.ack, batch.nack);
    },
  });
  return () => subscription.unsubscribe();
}

/** The send options a batch asks for. */
export function sendOptionsOf(batch: LogBatch): SendOptions | undefined {
  const { untilSentOn, backlog, handBack } = batch;
  if (backlog || handBack)
    return { ...(untilSentOn ? { untilSentOn } : {}), ...(backlog ? { backlog } : {}), ...(handBack ? { handBack } : {}) };
  return untilSentOn ? UNTIL_SENT_ON : undefined;
}

const UNTIL_SENT_ON: SendOptions = { untilSentOn: true };
