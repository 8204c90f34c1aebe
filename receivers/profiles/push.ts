/**
 * Forwarding of a decoded Push request. Every receiver gets every series: receivers run
 * concurrently, each taking the series one at a time in request order (one `append` per series),
 * and a failing series does not stop the ones after it. A Push of many series is prepared and
 * forwarded a slice at a time, the event loop free between slices.
 *
 * Labels follow the label-builder rules (a repeated name keeps its last value, an empty value
 * removes the label) and then the service-name rule. Any failure makes the whole call fail with
 * `internal`, one `unable to append series … to appendable N: …` line per failure; downstream
 * statuses are not mapped. A profiles source counts as one receiver that reports its own
 * `forward_to` list's failures by their indexes (`ReceiverFailures`), and one that is not
 * accepting (`SourceNotSubscribedError`) makes the call `unavailable`.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { buildLabels, copyLabel, isBuiltLabelSet, type Label } from '../../lib/pyroscope/labels.js';
import { messageOf } from '../../lib/go/error-chain.js';
import type { ProfilesReceiver, RawSample } from '../../core/profiles.js';
import { SourceNotSubscribedError } from '../../core/delivery.js';
import { ReceiverFailures } from '../../core/profile-delivery.js';
import type { PushRequest } from '../../lib/pyroscope/gen/push/v1/push_pb.js';
import { runSteps } from '../../lib/slices.js';
import { ensureServiceName, formatLabels } from './labels.js';
import { PUSH_SLICE_OBJECTS } from './push-objects.js';

export function forwardPush(request: PushRequest, receivers: readonly ProfilesReceiver[], signal: AbortSignal): Promise<void> {
  // The label rules run once per series; each receiver then gets its own copy.
  if (request.series.length <= PUSH_SLICE_OBJECTS) return fanOut(request.series.map(prepareSeries), receivers, signal);
  return runSteps(prepareInSlices(request.series)).then((series) => fanOut(series, receivers, signal));
}

function fanOut(series: readonly PreparedSeries[], receivers: readonly ProfilesReceiver[], signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const fanOut = new PushFanOut(series, signal, receivers.length, resolve, reject);
    if (series.length === 0) return;
    for (let index = 0; index < receivers.length; index++) fanOut.appendFrom(0, receivers[index]!, index);
  });
}

function* prepareInSlices(series: PushRequest['series']): Generator<void, PreparedSeries[], void> {
  const prepared: PreparedSeries[] = [];
  for (const s of series) {
    prepared.push(prepareSeries(s));
    if (prepared.length % PUSH_SLICE_OBJECTS === 0) yield;
  }
  return prepared;
}

function prepareSeries(s: PushRequest['series'][number]): PreparedSeries {
  // The decoded labels belong to this request alone, so a set already built needs no copy here.
  const labels = isBuiltLabelSet(s.labels) ? s.labels : buildLabels(s.labels);
  return { labels, forwarded: ensureServiceName(labels), samples: s.samples };
}

function toRawSample(sample: PushRequest['series'][number]['samples'][number]): RawSample {
  return { id: sample.ID, rawProfile: sample.rawProfile };
}

interface PreparedSeries {
  /** The request's labels after the builder rules: what error messages print. */
  readonly labels: readonly Label[];
  /** What receivers get: those labels after the service-name rule. */
  readonly forwarded: readonly Label[];
  readonly samples: PushRequest['series'][number]['samples'];
}

/**
 * One Push on its way to every receiver. Methods rather than closures or async functions per
 * receiver and series: this runs for every Push, and those cost noticeably more.
 */
class PushFanOut {
  private readonly failures: string[] = [];
  /** Set when a profiles source refused a series because nobody was taking its deliveries. */
  private refused: SourceNotSubscribedError | undefined;

  constructor(
    private readonly series: readonly PreparedSeries[],
    private readonly signal: AbortSignal,
    private waiting: number,
    private readonly resolve: () => void,
    private readonly reject: (err: Error) => void,
  ) {
    if (waiting === 0 || series.length === 0) resolve();
  }

  /** One receiver's share from series `k` on: in order, one at a time, a failure not stopping the rest. */
  appendFrom(k: number, receiver: ProfilesReceiver, index: number): void {
    const s = this.series[k]!;
    const samples = s.samples.map(toRawSample);
    try {
      receiver.append({ labels: s.forwarded.map(copyLabel), samples }, this.signal).then(
        () => this.next(k, receiver, index),
        (err: unknown) => this.failed(k, receiver, index, err),
      );
    } catch (err) {
      this.failed(k, receiver, index, err);
    }
  }

  private failed(k: number, receiver: ProfilesReceiver, index: number, err: unknown): void {
    if (err instanceof SourceNotSubscribedError) this.refused = err;
    const labels = formatLabels(this.series[k]!.labels);
    // A profiles source reports its forward_to list's failures by their own indexes.
    if (err instanceof ReceiverFailures)
      for (const f of err.failures) this.failures.push(`unable to append series ${labels} to appendable ${f.index}: ${messageOf(f.error)}`);
    else this.failures.push(`unable to append series ${labels} to appendable ${index}: ${messageOf(err)}`);
    this.next(k, receiver, index);
  }

  private next(k: number, receiver: ProfilesReceiver, index: number): void {
    if (k + 1 < this.series.length) {
      // Receivers that answer at once would chain every series in microtasks, which hold the
      // event loop until the last one: a slice of series at a time lets other requests in.
      if ((k + 1) % PUSH_SLICE_OBJECTS === 0) setImmediate(() => this.appendFrom(k + 1, receiver, index));
      else this.appendFrom(k + 1, receiver, index);
      return;
    }
    if (--this.waiting > 0) return;
    // A source that was not accepting took none of it: the client may send it again elsewhere or later.
    if (this.refused) this.reject(new ConnectError(this.refused.message, Code.Unavailable));
    else if (this.failures.length > 0) this.reject(new ConnectError(this.failures.join('\n'), Code.Internal));
    else this.resolve();
  }
}
