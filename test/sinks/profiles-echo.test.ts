import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../lib/config/parser.js';
import type { Block } from '../../lib/config/ast.js';
import { labelsFromObject } from '../../lib/pyroscope/labels.js';
import { scopedDeadline } from '../../core/deadline.js';
import type { ProfilesReceiver } from '../../core/profiles.js';
import { decodeComponent } from '../../core/runtime/component.js';
import { profilesEchoComponent } from '../../sinks/profiles-echo.js';
import { testContext } from '../receivers/profiles/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-echo-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function echo(body: string) {
  const block = parseConfig(`profiles.echo "t" {\n${body}\n}\n`, 'echo.alloy').body[0] as Block;
  const scope = { env: () => undefined, resolve: () => undefined };
  const { decodedArgs } = decodeComponent(profilesEchoComponent, block, scope, ['profiles.echo "t"']);
  const ctx = testContext('profiles.echo.t');
  const component = profilesEchoComponent.build(decodedArgs, ctx);
  const receiver = (component.exports.receiver as unknown as { value: ProfilesReceiver }).value;
  return { component, receiver, ctx };
}

const never = new AbortController().signal;

describe('profiles.echo', () => {
  it('writes one JSON line per ingest profile and per push series to stdout', async () => {
    const { receiver, ctx, component } = echo('');
    await receiver.appendIngest(
      {
        body: Buffer.from('abc'),
        contentType: ['a', 'b'],
        path: '/ingest',
        rawQuery: 'name=app&from=1',
        labels: labelsFromObject({ __name__: 'app', service_name: 'app' }),
      },
      never,
    );
    const deadline = scopedDeadline(Date.UTC(2030, 0, 1));
    await receiver.append(
      { labels: labelsFromObject({ service_name: 'svc' }), samples: [{ id: 'x', rawProfile: Buffer.from('abc') }] },
      deadline.signal,
    );
    deadline.release();
    await component.stop();
    const sha = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
    expect(ctx.output()).toBe(
      `{"api":"ingest","labels":{"__name__":"app","service_name":"app"},"content_type":["a","b"],"path":"/ingest","query":"name=app&from=1","size":3,"sha256":"${sha}","deadline":null}\n` +
        `{"api":"push","labels":{"service_name":"svc"},"samples":[{"id":"x","size":3,"sha256":"${sha}"}],"deadline":"2030-01-01T00:00:00.000Z"}\n`,
    );
    const metrics = await ctx.registry.metrics();
    expect(metrics).toContain('profiles_echo_profiles_total{component_id="profiles.echo.t",api="ingest"} 1');
    expect(metrics).toContain('profiles_echo_profiles_total{component_id="profiles.echo.t",api="push"} 1');
    expect(metrics).toContain('profiles_echo_bytes_total{component_id="profiles.echo.t"} 6');
  });

  it('appends to a file and keeps raw bodies in raw_dir', async () => {
    const path = join(dir, 'out.jsonl');
    const raw = join(dir, 'raw');
    const { receiver, component } = echo(`path = ${JSON.stringify(path)}\nraw_dir = ${JSON.stringify(raw)}`);
    await receiver.append(
      {
        labels: labelsFromObject({ service_name: 'svc' }),
        samples: [
          { id: '', rawProfile: Buffer.from([1, 2, 3]) },
          { id: '', rawProfile: Buffer.from([4]) },
        ],
      },
      never,
    );
    await component.stop();
    const record = JSON.parse(readFileSync(path, 'utf8')) as { samples: Array<{ raw_file: string }> };
    expect(record.samples.map((s) => [...readFileSync(s.raw_file)])).toEqual([[1, 2, 3], [4]]);
    expect(record.samples.every((s) => existsSync(s.raw_file) && s.raw_file.startsWith(raw))).toBe(true);
  });
});
