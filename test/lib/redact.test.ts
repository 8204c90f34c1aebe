import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isSecretHeader,
  redactHeaders,
  redactText,
  redactUrl,
  secretHeaderValues,
  splitUserinfo,
  userinfoAuthorization,
} from '../../lib/redact.js';

describe('splitUserinfo', () => {
  it('takes the userinfo off a URL, percent-decoding user and password as Go does', () => {
    expect(splitUserinfo('http://al%69ce:p%40ss+w:rd@loki:3100/loki/api/v1/push?x=1')).toEqual({
      url: 'http://loki:3100/loki/api/v1/push?x=1',
      username: 'alice',
      password: 'p@ss+w:rd',
    });
    expect(splitUserinfo('https://bob@host/path')).toEqual({ url: 'https://host/path', username: 'bob' });
    expect(splitUserinfo('http://a:b@c@host')).toEqual({ url: 'http://host', username: 'a', password: 'b@c' });
  });

  it('leaves a URL without userinfo as written, an @ in its path or query included', () => {
    for (const url of ['http://host:80/a@b', 'http://host?u=a@b', 'http://host#x@y', 'not a url', 'HTTP://HOST']) {
      expect(splitUserinfo(url)).toEqual({ url });
    }
  });

  it('keeps an escape it cannot decode as written', () => {
    expect(splitUserinfo('http://u:%zz@host/')).toEqual({ url: 'http://host/', username: 'u', password: '%zz' });
  });
});

describe('userinfoAuthorization', () => {
  it('is Basic with the decoded user and password, or undefined without userinfo', () => {
    expect(userinfoAuthorization('http://alice:p%40ss@host/')).toBe(`Basic ${Buffer.from('alice:p@ss').toString('base64')}`);
    expect(userinfoAuthorization('http://alice@host/')).toBe(`Basic ${Buffer.from('alice:').toString('base64')}`);
    expect(userinfoAuthorization('http://host/')).toBeUndefined();
  });
});

describe('redactUrl', () => {
  it('hides the password as Go’s URL.Redacted does and keeps everything else as written', () => {
    expect(redactUrl('http://alice:s3cret@loki:3100/push')).toBe('http://alice:xxxxx@loki:3100/push');
    expect(redactUrl('http://alice@loki/push')).toBe('http://alice@loki/push');
    expect(redactUrl('http://loki/push?a=b:c@d')).toBe('http://loki/push?a=b:c@d');
    expect(redactUrl('http://a:b@c@host/x')).toBe('http://a:xxxxx@host/x');
  });

  it('never leaves the password of any URL it is given', () => {
    const part = fc.stringMatching(/^[A-Za-z0-9%!$&'()*+,;=._~-]{1,12}$/);
    fc.assert(
      fc.property(part, part, fc.constantFrom('', '/p', '/p?q=1', ':8080/x'), (user, password, rest) => {
        const url = `http://${user}:SECRET${password}@host${rest}`;
        expect(redactUrl(url)).not.toContain(`SECRET${password}`);
      }),
    );
  });
});

describe('secret headers', () => {
  it('are Authorization and any header naming auth, a token, a key, a secret, a password or a cookie', () => {
    const secret = [
      'Authorization',
      'proxy-authorization',
      'X-Api-Key',
      'X-Auth-Token',
      'X-Secret',
      'X-Password',
      'Cookie',
      'X-Session-Id',
    ];
    const plain = ['X-Scope-OrgID', 'Content-Type', 'User-Agent', 'X-Tenant'];
    expect(secret.filter((h) => !isSecretHeader(h))).toEqual([]);
    expect(plain.filter((h) => isSecretHeader(h))).toEqual([]);
  });

  it('are hidden in a copy and listed by value', () => {
    const headers = { 'X-Api-Key': 'k-123', 'X-Scope-OrgID': 'team-a' };
    expect(redactHeaders(headers)).toEqual({ 'X-Api-Key': 'xxxxx', 'X-Scope-OrgID': 'team-a' });
    expect(secretHeaderValues(headers)).toEqual(['k-123']);
  });
});

describe('redactText', () => {
  it('hides each secret, its percent-encoded form and every URL password in a message', () => {
    expect(
      redactText('401: bad token tok-123456 for p@ss/word (p%40ss%2Fword) at http://u:other@h/ and tok-1234567', [
        'tok-123456',
        'tok-1234567',
        'p@ss/word',
      ]),
    ).toBe('401: bad token xxxxx for xxxxx (xxxxx) at http://u:xxxxx@h/ and xxxxx');
  });

  it('leaves secrets too short to tell from ordinary words alone', () => {
    expect(redactText('a bad request', ['a', 'bad'])).toBe('a bad request');
  });
});
