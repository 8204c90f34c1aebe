import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isSecretHeader,
  isSecretParameter,
  redactText,
  redactUrl,
  redactUrlsIn,
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
    expect(redactUrl('http://loki/push?a=b:c@d')).toBe('http://loki/push?a=b:c@d');
    expect(redactUrl('http://a:b@c@host/x')).toBe('http://a:xxxxx@host/x');
    expect(redactUrl('http://loki:3100/push')).toBe('http://loki:3100/push');
  });

  it('hides a userinfo that is a name alone whole: NATS takes it as a token', () => {
    expect(redactUrl('nats://s3cretToken@nats:4222')).toBe('nats://xxxxx@nats:4222');
    expect(redactUrl('http://alice@loki/push')).toBe('http://xxxxx@loki/push');
    expect(redactUrl('tls://t%40k@nats')).toBe('tls://xxxxx@nats');
  });

  it('hides the value of every query or fragment parameter named like a credential', () => {
    expect(
      redactUrl(
        'https://h/p?tenant=a&token=t1&password=p2&access_token=t3&api_key=k4&apikey=k5&client_secret=s6&sig=s7&X-Amz-Signature=s8&X-Amz-Credential=c9&pwd=p10&limit=5',
      ),
    ).toBe(
      'https://h/p?tenant=a&token=xxxxx&password=xxxxx&access_token=xxxxx&api_key=xxxxx&apikey=xxxxx&client_secret=xxxxx&sig=xxxxx&X-Amz-Signature=xxxxx&X-Amz-Credential=xxxxx&pwd=xxxxx&limit=5',
    );
    expect(redactUrl('https://u:p@h/cb#state=1&access_token=t1')).toBe('https://u:xxxxx@h/cb#state=1&access_token=xxxxx');
    expect(redactUrl('https://h/p?to%6Ben=t1&token=')).toBe('https://h/p?to%6Ben=xxxxx&token=');
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

  it('never leaves a bare userinfo or a secret parameter of any URL it is given', () => {
    // Quotes end a URL in free text, so they are left out of the parts here.
    const part = fc.stringMatching(/^[A-Za-z0-9%!$()*+,._~-]{1,12}$/);
    const name = fc.constantFrom('token', 'Password', 'access_token', 'api-key', 'secret', 'sig', 'X-Amz-Security-Token', 'auth');
    fc.assert(
      fc.property(part, name, part, fc.constantFrom('nats', 'http', 'tls'), (token, param, value, scheme) => {
        const url = `${scheme}://SECRET${token}@host:4222/p?a=1&${param}=SECRET${value}#f`;
        expect(redactUrl(url)).not.toContain('SECRET');
        expect(redactUrlsIn(`failed: ${url}, retrying`)).not.toContain('SECRET');
      }),
    );
  });
});

describe('isSecretParameter', () => {
  it('is a credential-like name, and not an ordinary one', () => {
    const secret = ['token', 'access_token', 'password', 'passwd', 'pass', 'pwd', 'api_key', 'key', 'secret', 'sig', 'signature'];
    const plain = ['tenant', 'limit', 'query', 'start', 'direction', 'org_id'];
    expect(secret.filter((n) => !isSecretParameter(n))).toEqual([]);
    expect(plain.filter((n) => isSecretParameter(n))).toEqual([]);
  });
});

describe('redactUrlsIn', () => {
  it('hides the credentials of every URL in a text, each URL of a comma-separated list alike', () => {
    expect(redactUrlsIn('connect to nats://tokA@a:4222,nats://u:pw@b:4222,tls://tokC@c failed')).toBe(
      'connect to nats://xxxxx@a:4222,nats://u:xxxxx@b:4222,tls://xxxxx@c failed',
    );
    expect(redactUrlsIn('{"url":"http://alice:s3@h/p?token=abc"}')).toBe('{"url":"http://alice:xxxxx@h/p?token=xxxxx"}');
    expect(redactUrlsIn('POST /loki/api/v1/push?token=abc answered 401')).toBe('POST /loki/api/v1/push?token=xxxxx answered 401');
    expect(redactUrlsIn('mail alice@example.com at 10:00')).toBe('mail alice@example.com at 10:00');
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

  it('are listed by value', () => {
    const headers = { 'X-Api-Key': 'k-123', 'X-Scope-OrgID': 'team-a' };
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
