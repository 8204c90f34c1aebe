import { describe, expect, it } from 'vitest';
import { SourceNotSubscribedError } from '../../core/delivery.js';
import { fanOutProfile, forwardProfiles, profileSource, ReceiverFailures, type ProfileDelivery } from '../../core/profile-delivery.js';
import { labelsFromObject } from '../../lib/pyroscope/labels.js';
import type { ProfilesReceiver, PushSeries } from '../../core/profiles.js';

const never = new AbortController().signal;
const series = (): PushSeries => ({
  labels: labelsFromObject({ service_name: 'svc' }),
  samples: [{ id: 'a', rawProfile: Buffer.from('x') }],
});

function recorder(fail?: string): ProfilesReceiver & { got: PushSeries[] } {
  const got: PushSeries[] = [];
  return {
    got,
    append: async (s) => {
      got.push(s);
      if (fail) throw new Error(fail);
    },
    appendIngest: async () => {},
  };
}

function delivery(answers: string[]): ProfileDelivery {
  return {
    kind: 'push',
    series: series(),
    signal: never,
    ack: () => answers.push('ack'),
    nack: (err) => answers.push(`nack ${(err as Error).message}`),
  };
}

describe('profileSource', () => {
  it('emits a delivery per append, settling the append with its answer, and refuses without a subscriber', async () => {
    let upstream: ProfilesReceiver | undefined;
    const source = profileSource((receiver) => {
      upstream = receiver;
      return { stop: async () => {} };
    });
    const seen: string[] = [];
    const subscription = source.subscribe((d) => {
      seen.push(d.kind);
      if (d.kind === 'push') d.ack();
      else d.nack(new Error('no room'));
    });
    await upstream!.append(series(), never);
    await expect(
      upstream!.appendIngest({ body: Buffer.from(''), contentType: [], path: '/ingest', rawQuery: '', labels: [] }, never),
    ).rejects.toThrow('no room');
    expect(seen).toEqual(['push', 'ingest']);
    subscription.unsubscribe();
    await expect(upstream!.append(series(), never)).rejects.toBeInstanceOf(SourceNotSubscribedError);
  });
});

describe('fanOutProfile', () => {
  it('gives every receiver but the last its own labels and samples, sharing the bytes', async () => {
    const receivers = [recorder(), recorder(), recorder()];
    const answers: string[] = [];
    const d = delivery(answers);
    await fanOutProfile(receivers, d);
    const [a, b, c] = receivers.map((r) => r.got[0]!);
    expect(c).toBe(d.kind === 'push' ? d.series : undefined);
    expect(a!.labels).not.toBe(c!.labels);
    expect(b!.labels).not.toBe(c!.labels);
    expect(a!.labels).toEqual(c!.labels);
    expect(a!.samples[0]!.rawProfile).toBe(c!.samples[0]!.rawProfile);
  });

  it('rejects with every failing receiver by its index once all have settled', async () => {
    const receivers = [recorder('first down'), recorder(), recorder('third down')];
    const err = await fanOutProfile(receivers, delivery([])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReceiverFailures);
    expect((err as ReceiverFailures).failures.map((f) => [f.index, (f.error as Error).message])).toEqual([
      [0, 'first down'],
      [2, 'third down'],
    ]);
    expect(receivers.map((r) => r.got.length)).toEqual([1, 1, 1]);
  });
});

describe('forwardProfiles', () => {
  it('reads the receiver list for every delivery and answers each', async () => {
    let upstream: ProfilesReceiver | undefined;
    const source = profileSource((receiver) => {
      upstream = receiver;
      return { stop: async () => {} };
    });
    const first = recorder();
    const second = recorder('down');
    let list: ProfilesReceiver[] = [first];
    const stop = forwardProfiles(source, () => list);
    await upstream!.append(series(), never);
    list = [second];
    await expect(upstream!.append(series(), never)).rejects.toThrow('down');
    expect([first.got.length, second.got.length]).toEqual([1, 1]);
    stop();
  });
});
