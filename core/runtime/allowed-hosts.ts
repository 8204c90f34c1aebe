/**
 * Which `Host` headers the run server answers, so that a page on another site cannot read it
 * through DNS rebinding: the attacker's name is made to resolve to the server's address, and the
 * browser, taking the page and the server for one origin, lets the page read the answers. Such a
 * request always carries the attacker's name as its Host, never an IP literal (a page whose origin
 * is an IP literal is that address itself), so checking the name is enough.
 *
 * Allowed: the host of the listen address; `localhost` and loopback literals when listening on a
 * loopback or wildcard address; the names given; and a request without Host (no browser sends
 * one). On a wildcard address (`0.0.0.0`, `::`) with no names given, every Host is allowed, as
 * the reference agent allows every Host: the names such a server is reached by (a service name, an
 * ingress) are not known, and it already answers anyone on the network. Given names, a wildcard
 * server allows them, `localhost` and any IP literal.
 */
import { isIP } from 'node:net';

/** Whether a request with this Host header (`name`, `name:port`, `[v6]:port`) may be answered. */
export type HostCheck = (host: string | undefined) => boolean;

export function hostCheck(listenHost: string, names: readonly string[]): HostCheck {
  const listen = normalize(listenHost);
  const wildcard = listen === '' || listen === '0.0.0.0' || listen === '::';
  if (wildcard && names.length === 0) return () => true;
  const allowed = new Set(names.map(normalize).filter((n) => n !== ''));
  if (!wildcard) allowed.add(listen);
  const loopbackToo = wildcard || isLoopback(listen);
  return (header) => {
    if (header === undefined || header === '') return true;
    const host = hostOf(header);
    if (host === undefined) return false;
    if (allowed.has(host)) return true;
    if (loopbackToo && isLoopback(host)) return true;
    return wildcard && isIP(host) !== 0;
  };
}

/** The host of a Host header, lower-cased, without port, brackets or a trailing dot; undefined when malformed. */
function hostOf(header: string): string | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+))(?::\d{1,5})?$/.exec(header.trim());
  if (!m) return undefined;
  return normalize(m[1] ?? m[2]!);
}

function normalize(host: string): string {
  return host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || /^::ffff:127\./.test(host);
}
