import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_TIMER_MS } from '../../core/clock.js';
import { decodeComponent, validatedArgs, type ComponentDefinition } from '../../core/runtime/component.js';
import type { Block } from '../../lib/config/ast.js';
import { ConfigErrors } from '../../lib/config/errors.js';
import { parseConfig } from '../../lib/config/parser.js';
import { endpointUrl, retrySettingsOf, sendsUrlCredentials } from '../../sinks/endpoint-fields.js';
import { logsWriteComponent, lokiWrite } from '../../sinks/logs-write.js';
import { profilesWriteComponent } from '../../sinks/profiles-write.js';

const HOUR_MS = 3_600_000;

/** The settings `def` makes of its block with one `endpoint` block of `body`, or the messages of the errors it reports. */
function validated<A>(def: ComponentDefinition<any, A>, body: string): A | string[] {
  const block = parseConfig(`${def.name} "t" {\n  endpoint {\n${body}\n  }\n}\n`, 'e.alloy').body[0] as Block;
  const scope = { env: () => undefined, resolve: () => undefined };
  const { decodedArgs } = decodeComponent(def, block, scope, [`${def.name} "t"`]);
  try {
    return validatedArgs(def, decodedArgs, { id: `${def.name}.t` }).values;
  } catch (err) {
    if (err instanceof ConfigErrors) return err.errors.map((e) => e.message);
    throw err;
  }
}

/** What `validated` gives when the block is valid. */
function validatedSettings<A>(def: ComponentDefinition<any, A>, body: string): A {
  const result = validated(def, body);
  if (Array.isArray(result)) throw new Error(result.join('\n'));
  return result;
}

const retryOf = (e: {
  remoteTimeoutMs: number;
  minBackoffMs: number;
  maxBackoffMs: number;
  maxBackoffRetries: number;
  retryOnHttp429: boolean;
}) => [e.remoteTimeoutMs, e.minBackoffMs, e.maxBackoffMs, e.maxBackoffRetries, e.retryOnHttp429];

describe('endpoint retry settings', () => {
  it('keeps every duration within what a Node timer can wait, and the attempts and 429 choice as given', () => {
    const reported: string[] = [];
    const settings = retrySettingsOf(
      {
        remote_timeout: 1000 * HOUR_MS,
        min_backoff_period: 250,
        max_backoff_period: 2000 * HOUR_MS,
        max_backoff_retries: 3,
        retry_on_http_429: false,
      },
      (reason) => reported.push(reason),
    );
    expect(settings).toEqual({
      remoteTimeoutMs: MAX_TIMER_MS,
      minBackoffMs: 250,
      maxBackoffMs: MAX_TIMER_MS,
      maxBackoffRetries: 3,
      retryOnHttp429: false,
    });
    expect(reported).toEqual([]);
  });

  it('reports a timeout of 0 and a negative number of attempts at their attributes, through the writer’s fail', () => {
    const reported: [string, string][] = [];
    retrySettingsOf(
      { remote_timeout: 0, min_backoff_period: 500, max_backoff_period: 1000, max_backoff_retries: -1, retry_on_http_429: true },
      (reason, attribute) => reported.push([reason, attribute]),
    );
    expect(reported).toEqual([
      ['remote_timeout must be greater than 0', 'remote_timeout'],
      ['max_backoff_retries must not be negative', 'max_backoff_retries'],
    ]);
  });

  it('is decoded alike by logs.write and profiles.write, defaults included', () => {
    const bodies = [
      '    url = "http://h/push"',
      '    url = "http://h/push"\n    remote_timeout = "2s"\n    min_backoff_period = "1s"\n    max_backoff_period = "1000h"\n    max_backoff_retries = 0\n    retry_on_http_429 = false',
    ];
    const logs = bodies.map((body) => retryOf(validatedSettings(logsWriteComponent, body).endpoints[0]!));
    const profiles = bodies.map((body) => retryOf(validatedSettings(profilesWriteComponent, body).endpoints[0]!));
    expect(logs).toEqual([
      [10_000, 500, 300_000, 10, true],
      [2_000, 1_000, MAX_TIMER_MS, 0, false],
    ]);
    expect(profiles).toEqual(logs);
  });

  it('refuses the same values with the same texts in both writers, each placing them its own way', () => {
    const body = '    url = "http://h/push"\n    remote_timeout = "0s"\n    max_backoff_retries = -1';
    expect(validated(logsWriteComponent, body)).toEqual([
      'e.alloy:4:5: logs.write "t" > endpoint: remote_timeout must be greater than 0',
      'e.alloy:5:5: logs.write "t" > endpoint: max_backoff_retries must not be negative',
    ]);
    expect(validated(profilesWriteComponent, body)).toEqual([
      'e.alloy:2:3: profiles.write "t" > endpoint: remote_timeout must be greater than 0',
      'e.alloy:2:3: profiles.write "t" > endpoint: max_backoff_retries must not be negative',
    ]);
  });
});

describe('endpoint URL', () => {
  it('takes the userinfo off, percent-decoded, and keeps the host', () => {
    expect(endpointUrl('https://ops:p%40ss@loki:3100/loki/api/v1/push')).toEqual({
      requestUrl: 'https://loki:3100/loki/api/v1/push',
      host: 'loki:3100',
      username: 'ops',
      password: 'p@ss',
    });
    expect(endpointUrl('http://pyroscope:4040')).toEqual({ requestUrl: 'http://pyroscope:4040', host: 'pyroscope:4040' });
  });

  it('names what makes a URL unusable: one that does not parse, a scheme other than http and https', () => {
    expect(endpointUrl(':::')).toEqual({ requestUrl: ':::', host: '', problem: 'invalid' });
    expect(endpointUrl('ftp://u:secret@files/push')).toEqual({
      requestUrl: 'ftp://files/push',
      host: 'files',
      username: 'u',
      password: 'secret',
      problem: 'scheme',
    });
  });

  it('gives back any user name and password written percent-encoded, and a request URL without them', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string(), (username, password) => {
        const url = endpointUrl(`http://${encodeURIComponent(username)}:${encodeURIComponent(password)}@loki:3100/push`);
        expect(url).toEqual({ requestUrl: 'http://loki:3100/push', host: 'loki:3100', username, password });
      }),
    );
  });

  it('sends URL credentials only when neither a way to authenticate nor an Authorization header of any case is set', () => {
    expect(sendsUrlCredentials(false, { 'X-Scope-OrgID': 'team' })).toBe(true);
    expect(sendsUrlCredentials(true, {})).toBe(false);
    expect(sendsUrlCredentials(false, { authorization: 'Custom x' })).toBe(false);
    expect(sendsUrlCredentials(false, { AUTHORIZATION: 'Custom x' })).toBe(false);
  });
});

describe('endpoint options given in code', () => {
  const url = 'http://127.0.0.1:1/loki/api/v1/push';
  const messageOf = (options: object) => {
    try {
      lokiWrite({ endpoint: [{ url, ...options }] } as never);
      return 'accepted';
    } catch (err) {
      return (err as Error).message;
    }
  };

  it('reports a value that is not of its type alone, not the checks a stand-in for it would fail', () => {
    expect(messageOf({ remote_timeout: 'soon' })).toBe('logs.write > endpoint: attribute "remote_timeout": time: invalid duration "soon"');
    expect(messageOf({ remote_timeout: '0s' })).toBe('logs.write > endpoint: remote_timeout must be greater than 0');
    expect(messageOf({ min_backoff_period: 'x', batch_size: 'lots' })).toBe(
      [
        'logs.write > endpoint: attribute "batch_size": units: invalid lots',
        'logs.write > endpoint: attribute "min_backoff_period": time: invalid duration "x"',
      ].join('\n'),
    );
  });
});
