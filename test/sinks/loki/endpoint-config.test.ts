import { describe, expect, it } from 'vitest';
import type { Block } from '../../../lib/config/ast.js';
import { MAX_TIMER_MS } from '../../../core/clock.js';
import type { ConfigErrors } from '../../../lib/config/errors.js';
import { parseConfig } from '../../../lib/config/parser.js';
import { decodeComponent, validatedArgs } from '../../../core/runtime/component.js';
import { logsWriteComponent } from '../../../sinks/logs-write.js';

/** The endpoint configs of a `logs.write` whose one endpoint block has `body`. */
function endpoints(body: string) {
  const block = parseConfig(`logs.write "w" {\n  endpoint {\n${body}\n  }\n}\n`, 'w.alloy').body[0] as Block;
  const path = ['logs.write "w"'];
  const { decodedArgs } = decodeComponent(logsWriteComponent, block, { env: () => undefined, resolve: () => undefined }, path);
  return validatedArgs(logsWriteComponent, decodedArgs, { id: 'logs.write.w' }).values.endpoints;
}

const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;

describe('logs.write endpoint', () => {
  it('sends URL credentials as Basic auth, decoded, and pushes to the URL without them', () => {
    const [config] = endpoints('url = "http://ops:p%40ss%2Fw0rd@loki:3100/loki/api/v1/push"');
    expect(config!.url).toBe('http://loki:3100/loki/api/v1/push');
    expect(config!.host).toBe('loki:3100');
    expect(config!.authorization).toBe(basic('ops:p@ss/w0rd'));
    expect(config!.secrets).toContain('p@ss/w0rd');
  });

  it('lets basic_auth, a bearer token or an Authorization header win over URL credentials', () => {
    expect(endpoints('url = "http://u:p@loki/push"\nbasic_auth {\n username = "a"\n password = "b-pass"\n}')[0]!.authorization).toBe(
      basic('a:b-pass'),
    );
    expect(endpoints('url = "http://u:p@loki/push"\nbearer_token = "tok-1234"')[0]!.authorization).toBe('Bearer tok-1234');
    expect(endpoints('url = "http://u:p@loki/push"\nheaders = { "authorization" = "Custom x" }')[0]!.authorization).toBeUndefined();
  });

  it('lists every credential as a secret, secret headers included, and the tenant header not', () => {
    const [config] = endpoints(
      'url = "http://loki/push"\nbearer_token = "tok-1234"\nheaders = { "X-Api-Key" = "key-5678", "X-Scope-OrgID" = "team" }',
    );
    expect(config!.secrets).toEqual(expect.arrayContaining(['tok-1234', 'key-5678', 'Bearer tok-1234']));
    expect(config!.secrets).not.toContain('team');
  });

  it('names a bad URL without its password', () => {
    let caught: unknown;
    try {
      endpoints('url = "ftp://ops:hunter22@loki/push"');
    } catch (err) {
      caught = err;
    }
    expect((caught as ConfigErrors).errors.map((e) => e.reason)).toEqual(['url must use http or https, got "ftp://ops:xxxxx@loki/push"']);
  });

  it('keeps every duration within what a Node timer can wait', () => {
    const [config] = endpoints(
      'url = "http://loki/push"\nremote_timeout = "1000h"\nbatch_wait = "1000h"\nmin_backoff_period = "1000h"\nmax_backoff_period = "2000h"\nqueue_config {\n drain_timeout = "1000h"\n}',
    );
    expect([config!.remoteTimeoutMs, config!.batchWaitMs, config!.minBackoffMs, config!.maxBackoffMs, config!.drainTimeoutMs]).toEqual(
      Array(5).fill(MAX_TIMER_MS),
    );
  });
});
