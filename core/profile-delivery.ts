import type { Observer } from 'rxjs';
import { ackedSource, type AckedSource, type SourceRun } from './delivery.js';
import { copyLabel } from '../lib/pyroscope/labels.js';
import type { IngestProfile, ProfilesReceiver, PushSeries } from './profiles.js';

/**
 * Delivery with acknowledgement for profiles, the analogue of `LogBatch` and its helpers in
 * delivery.ts. A profiles source is an Observable of deliveries, one per `append` or
 * `appendIngest` a receiver would get: a Push series or an ingest profile, the caller's signal
 * (its cancellation and deadline), and `ack`/`nack`. The source answers its client only once
 * every delivery of the request has been answered.
 */
export type ProfileDelivery = ProfileDeliveryValue & {
  /** The caller's cancellation and, when it has one, its deadline (`deadlineOf`). */
  readonly signal: AbortSignal;
  /** The profile is delivered: the source may answer its client. */
  ack(): void;
  /**
   * The profile was not delivered; the source answers its client as for a failing receiver (a
   * Push `internal`, an ingest request 500 or the downstream status the error carries).
   */
  nack(error: unknown): void;
};

/** What a delivery carries: one Push series, or one ingest profile. */
export type ProfileDeliveryValue =
  | { readonly kind: 'push'; readonly series: PushSeries }
  | { readonly kind: 'ingest'; readonly profile: IngestProfile };

/** A running profiles source: an Observable of deliveries with a graceful `stop()` (see `LogSource`). */
export type ProfileSource = AckedSource<ProfileDelivery>;

/**
 * Makes a profiles source from a start function that sends through a `ProfilesReceiver`: every
 * `append`/`appendIngest` becomes one emitted delivery, settling with its `ack`/`nack`. `start`
 * runs on subscribe; a call while nobody is subscribed is refused with `SourceNotSubscribedError`.
 */
export function profileSource(start: (receiver: ProfilesReceiver) => SourceRun): ProfileSource {
  return ackedSource<ProfileDelivery, { value: ProfileDeliveryValue; signal: AbortSignal }>(
    ({ value, signal }, ack, nack) => ({ ...value, signal, ack, nack }),
    (send) =>
      start({
        append: (series, signal) => send({ value: { kind: 'push', series }, signal }),
        appendIngest: (profile, signal) => send({ value: { kind: 'ingest', profile }, signal }),
      }),
  );
}

/** Hands one delivery to a receiver: `append` or `appendIngest` with the delivery's signal. */
export function deliverTo(receiver: ProfilesReceiver, delivery: ProfileDelivery): Promise<void> {
  try {
    return delivery.kind === 'push'
      ? receiver.append(delivery.series, delivery.signal)
      : receiver.appendIngest(delivery.profile, delivery.signal);
  } catch (err) {
    return Promise.reject(err);
  }
}

/** One receiver's failure among several: `index` is its place in the list it was given. */
export interface ReceiverFailure {
  readonly index: number;
  readonly error: unknown;
}

/**
 * The receivers of a list that failed one delivery, in the order they failed. A source reports
 * each as the receiver at its index failing, so a `forward_to` list reads as it does when the
 * receivers are called directly (`unable to append series … to appendable 1: …`).
 */
export class ReceiverFailures extends Error {
  constructor(readonly failures: readonly ReceiverFailure[]) {
    super(failures.map((f) => (f.error instanceof Error ? f.error.message : String(f.error))).join('\n'));
    this.name = 'ReceiverFailures';
  }
}

/**
 * Delivers to every receiver at once, each but the last with its own copy of the labels (and
 * content types; profile bytes are shared and never written), and resolves once all have
 * settled; rejects with `ReceiverFailures` when any failed.
 */
export function fanOutProfile(receivers: readonly ProfilesReceiver[], delivery: ProfileDelivery): Promise<void> {
  if (receivers.length === 1) {
    return deliverTo(receivers[0]!, delivery).catch((error: unknown) => {
      throw new ReceiverFailures([{ index: 0, error }]);
    });
  }
  return new Promise((resolve, reject) => {
    const failures: ReceiverFailure[] = [];
    let waiting = receivers.length;
    if (waiting === 0) return resolve();
    const settled = () => {
      if (--waiting > 0) return;
      if (failures.length > 0) reject(new ReceiverFailures(failures));
      else resolve();
    };
    receivers.forEach((receiver, index) => {
      const own = index === receivers.length - 1 ? delivery : copyOf(delivery);
      deliverTo(receiver, own).then(settled, (error: unknown) => {
        failures.push({ index, error });
        settled();
      });
    });
  });
}

function copyOf(delivery: ProfileDelivery): ProfileDelivery {
  if (delivery.kind === 'push') {
    const { labels, samples } = delivery.series;
    return {
      ...delivery,
      series: { labels: labels.map(copyLabel), samples: samples.map((s) => ({ id: s.id, rawProfile: s.rawProfile })) },
    };
  }
  const profile = delivery.profile;
  return { ...delivery, profile: { ...profile, contentType: profile.contentType.slice(), labels: profile.labels.map(copyLabel) } };
}

/**
 * Forwards every delivery of a source to receivers, as a source component does with its
 * `forward_to`: all receivers at once (see `fanOutProfile`), `receivers()` read for every delivery
 * so a reload's new list applies to the next one. Returns the subscription's teardown.
 */
export function forwardProfiles(source: ProfileSource, receivers: () => readonly ProfilesReceiver[]): () => void {
  const subscription = source.subscribe({
    next: (delivery) => {
      fanOutProfile(receivers(), delivery).then(delivery.ack, delivery.nack);
    },
  });
  return () => subscription.unsubscribe();
}

/**
 * A profiles sink: a `ProfilesReceiver` (usable in a `forward_to` list) and an Observer of
 * deliveries (`source.subscribe(sink)`), acknowledging each once it is delivered. `stop()` lets
 * go of what it holds, as a stopping config component does; `complete()` and `error()` stop it too.
 */
export interface ProfilesSink extends ProfilesReceiver, Observer<ProfileDelivery> {
  stop(): Promise<void>;
}

/** Makes a `ProfilesSink` from a receiver and its graceful stop (called once). */
export function profilesSink(receiver: ProfilesReceiver, stop: () => Promise<void>): ProfilesSink {
  let stopped: Promise<void> | undefined;
  const stopOnce = () => {
    stopped ??= stop();
    return stopped;
  };
  return {
    append: (series, signal) => receiver.append(series, signal),
    appendIngest: (profile, signal) => receiver.appendIngest(profile, signal),
    next: (delivery) => {
      deliverTo(receiver, delivery).then(delivery.ack, delivery.nack);
    },
    error: () => void stopOnce().catch(() => {}),
    complete: () => void stopOnce().catch(() => {}),
    stop: stopOnce,
  };
}
