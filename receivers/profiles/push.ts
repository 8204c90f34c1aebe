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
import { buildLabels, messageOf, type ProfilesReceiver, type RawSample } from '../../core/profiles';
import type { PushRequest } from '../../core/proto/gen/push/v1/push_pb';
import { ensureServiceName, formatLabels } from './labels';

export async function forwardPush(request: PushRequest, receivers: readonly ProfilesReceiver[], signal: AbortSignal): Promise<void> {
  const failures: string[] = [];
  await Promise.all(
    receivers.map(async (receiver, index) => {
      for (const series of request.series) {
        const labels = buildLabels(series.labels);
        const samples: RawSample[] = series.samples.map((s) => ({ id: s.ID, rawProfile: s.rawProfile }));
        try {
          await receiver.append({ labels: ensureServiceName(labels), samples }, signal);
        } catch (err) {
          failures.push(`unable to append series ${formatLabels(labels)} to appendable ${index}: ${messageOf(err)}`);
        }
      }
    }),
  );
  if (failures.length > 0) throw new ConnectError(failures.join('\n'), Code.Internal);
}
