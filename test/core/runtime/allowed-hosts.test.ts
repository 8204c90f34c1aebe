import { describe, expect, it } from 'vitest';
import { hostCheck } from '../../../core/runtime/allowed-hosts.js';

const allowedOf = (listen: string, names: string[], hosts: string[]) => {
  const check = hostCheck(listen, names);
  return hosts.filter((h) => check(h));
};

describe('hostCheck', () => {
  it('on a loopback address allows the address, localhost and loopback literals, and no other name', () => {
    expect(
      allowedOf(
        '127.0.0.1',
        [],
        ['127.0.0.1:12345', 'localhost', 'Localhost:1', '[::1]:80', '127.1.2.3', 'evil.example', 'evil.example:12345', '10.0.0.1'],
      ),
    ).toEqual(['127.0.0.1:12345', 'localhost', 'Localhost:1', '[::1]:80', '127.1.2.3']);
    expect(allowedOf('::1', [], ['[::1]:12345', 'localhost', 'evil.example'])).toEqual(['[::1]:12345', 'localhost']);
  });

  it('on another address allows that address and the names given only', () => {
    expect(
      allowedOf('192.0.2.7', ['agent.lan'], ['192.0.2.7:12345', 'agent.lan', 'AGENT.LAN.:80', 'localhost', '127.0.0.1', 'evil.example']),
    ).toEqual(['192.0.2.7:12345', 'agent.lan', 'AGENT.LAN.:80']);
  });

  it('on a wildcard address allows every Host, as the reference does, unless names are given', () => {
    for (const listen of ['0.0.0.0', '::', '']) expect(allowedOf(listen, [], ['evil.example', 'svc.cluster.local:12345'])).toHaveLength(2);
    expect(allowedOf('0.0.0.0', ['agent.lan'], ['agent.lan', 'localhost', '10.1.2.3:12345', '[2001:db8::1]', 'evil.example'])).toEqual([
      'agent.lan',
      'localhost',
      '10.1.2.3:12345',
      '[2001:db8::1]',
    ]);
  });

  it('allows a request without Host and refuses a malformed one', () => {
    const check = hostCheck('127.0.0.1', []);
    expect(check(undefined)).toBe(true);
    expect(check('')).toBe(true);
    expect(['127.0.0.1:x', 'localhost:1:2', '[::1', 'a b', '127.0.0.1:123456'].filter((h) => check(h))).toEqual([]);
  });
});
