import { describe, expect, it } from 'vitest';
import { MAX_TIMER_MS } from '../../../core/clock.js';
import type { ConfigErrors } from '../../../lib/config/errors.js';
import { authorizationHeader } from '../../../sinks/profiles/auth.js';
import { writeConfigOf } from './harness.js';

const endpoint = (body: string) => writeConfigOf(`endpoint {\n${body}\n}`).endpoints[0]!;
const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;

describe('profiles.write endpoint', () => {
  it('sends URL credentials as Basic auth, decoded, to the URL without them, and shows the URL without the password', () => {
    const config = endpoint('url = "http://ops:p%40ss@pyroscope:4040/base"');
    expect(config.requestUrl).toBe('http://pyroscope:4040/base');
    expect(config.url).toBe('http://ops:xxxxx@pyroscope:4040/base');
    expect(authorizationHeader(config.auth)).toBe(basic('ops:p@ss'));
    expect(config.secrets).toContain('p@ss');
  });

  it('lets configured credentials or an Authorization header win over URL credentials', () => {
    expect(authorizationHeader(endpoint('url = "http://u:p@h"\nbearer_token = "tok-1234"').auth)).toBe('Bearer tok-1234');
    expect(authorizationHeader(endpoint('url = "http://u:p@h"\nheaders = { "Authorization" = "Custom x" }').auth)).toBeUndefined();
  });

  it('lists every credential it holds as a secret', () => {
    const config = endpoint('url = "http://h"\nauthorization {\n credentials = "cred-1234"\n}\nheaders = { "X-Auth-Token" = "tok-5678" }');
    expect(config.secrets).toEqual(['cred-1234', 'tok-5678']);
  });

  it('names a bad URL without its password', () => {
    let caught: unknown;
    try {
      endpoint('url = "ftp://ops:hunter22@h"');
    } catch (err) {
      caught = err;
    }
    expect((caught as ConfigErrors).errors.map((e) => e.reason)).toEqual([
      'unsupported scheme in url "ftp://ops:xxxxx@h": expected http or https',
    ]);
  });

  it('keeps every duration within what a Node timer can wait', () => {
    const config = endpoint('url = "http://h"\nremote_timeout = "1000h"\nmin_backoff_period = "1000h"\nmax_backoff_period = "1000h"');
    expect([config.remoteTimeoutMs, config.minBackoffMs, config.maxBackoffMs]).toEqual([MAX_TIMER_MS, MAX_TIMER_MS, MAX_TIMER_MS]);
  });
});
