/**
 * Forwarding of a decoded Push request. Every receiver gets every series: receivers run
 * concurrently, each taking the series one at a time in request order (one `append` per series),
 * and a failing series does not stop the ones after it.
 *
 * Labels follow the label-builder rules (a repeated name keeps its last value, an empty value
 * removes the label) and then the service-name rule. Any failure makes the whole call fail with
 * `internal`, one `unable to append series … to appendable N: …` line per failure; downstream
 * statuses are not mapped.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { buildLabels, copyLabel, messageOf, type Label, type ProfilesReceiver, type RawSample } from '../../core/profiles';
import type { PushRequest } from '../../core/proto/gen/push/v1/push_pb';
import { ensureServiceName, formatLabels } from './labels';

export function forwardPush(request: PushRequest, receivers: readonly ProfilesReceiver[], signal: AbortSignal): Promise<void> {
  // The label rules run once per series; each receiver then gets its own copy.
  const series: PreparedSeries[] = request.series.map((s) => {
    const labels = buildLabels(s.labels);
    return { labels, forwarded: ensureServiceName(labels), samples: s.samples };
  });
  // Plain callbacks rather than an async function per receiver: this runs for every Push.
  return new Promise((resolve, reject) => {
    const failures: string[] = [];
    let waiting = receivers.length;
    const receiverDone = () => {
      if (--waiting > 0) return;
      if (failures.length > 0) reject(new ConnectError(failures.join('\n'), Code.Internal));
      else resolve();
    };
    if (waiting === 0 || series.length === 0) {
      resolve();
      return;
    }
    receivers.forEach((receiver, index) => appendFrom(0, receiver, index, series, signal, failures, receiverDone));
  });
}

interface PreparedSeries {
  /** The request's labels after the builder rules: what error messages print. */
  readonly labels: readonly Label[];
  /** What receivers get: those labels after the service-name rule. */
  readonly forwarded: readonly Label[];
  readonly samples: PushRequest['series'][number]['samples'];
}

/**
 * One receiver's share from series `k` on: every series in order, one at a time, a failure
 * recorded without stopping the rest; `done` once the last has settled.
 */
function appendFrom(
  k: number,
  receiver: ProfilesReceiver,
  index: number,
  series: readonly PreparedSeries[],
  signal: AbortSignal,
  failures: string[],
  done: () => void,
): void {
  const s = series[k]!;
  const next = () => (k + 1 < series.length ? appendFrom(k + 1, receiver, index, series, signal, failures, done) : done());
  const failed = (err: unknown) => {
    failures.push(`unable to append series ${formatLabels(s.labels)} to appendable ${index}: ${messageOf(err)}`);
    next();
  };
  const samples: RawSample[] = s.samples.map((sample) => ({ id: sample.ID, rawProfile: sample.rawProfile }));
  try {
    receiver.append({ labels: s.forwarded.map(copyLabel), samples }, signal).then(next, failed);
  } catch (err) {
    failed(err);
  }
}
