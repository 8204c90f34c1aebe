import { PassThrough, Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ProfileDelivery } from '../../core/profile-delivery.js';
import { labelsFromObject } from '../../lib/pyroscope/labels.js';
import { profilesEcho } from '../../sinks/index.js';

const never = new AbortController().signal;
const sha = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';

/** A delivery of one push series whose answer is recorded in `answers`. */
function pushDelivery(service: string, answers: string[]): ProfileDelivery {
  return {
    kind: 'push',
    series: { labels: labelsFromObject({ service_name: service }), samples: [{ id: 'x', rawProfile: Buffer.from('abc') }] },
    signal: never,
    ack: () => answers.push(`ack ${service}`),
    nack: (err) => answers.push(`nack ${service}: ${(err as Error).message}`),
  };
}

describe('profilesEcho', () => {
  it('writes each delivery as a JSON line and acknowledges it once the line is taken', async () => {
    const stdout = new PassThrough();
    let text = '';
    stdout.on('data', (c) => (text += c));
    const registry = new Registry();
    const sink = profilesEcho({}, { stdout, registry, id: 'echo' });
    const deliveries = new Subject<ProfileDelivery>();
    deliveries.subscribe(sink);
    const answers: string[] = [];
    deliveries.next(pushDelivery('svc', answers));
    await expect.poll(() => answers).toEqual(['ack svc']);
    expect(text).toBe(`{"api":"push","labels":{"service_name":"svc"},"samples":[{"id":"x","size":3,"sha256":"${sha}"}],"deadline":null}\n`);
    const metrics = await registry.metrics();
    expect(metrics).toContain('profiles_echo_profiles_total{component_id="echo",api="push"} 1');
    expect(metrics).toContain('profiles_echo_bytes_total{component_id="echo"} 3');
    deliveries.complete();
    await sink.stop();
  });

  it('refuses a delivery whose line cannot be written, and counts it', async () => {
    const broken = new Writable({ write: (_chunk, _encoding, done) => done(new Error('disk full')) });
    broken.on('error', () => {});
    const registry = new Registry();
    const sink = profilesEcho({}, { stdout: broken, registry, id: 'echo' });
    const answers: string[] = [];
    sink.next(pushDelivery('svc', answers));
    await expect.poll(() => answers).toEqual(['nack svc: disk full']);
    expect(await registry.metrics()).toContain('profiles_echo_write_errors_total{component_id="echo"} 1');
  });

  it('rejects a path holding a NUL with the text profiles.echo gives', () => {
    expect(() => profilesEcho({ path: 'a\0b' })).toThrow(
      'profiles.echo: open "a\\u0000b": invalid argument (a path cannot hold a NUL character)',
    );
  });
});
