/**
 * sprig v3.3.0 `urlParse` and `urlJoin` over a port of the parts of Go's net/url they use:
 * `url.Parse` (scheme, opaque, authority, percent-decoding with Go's errors) and
 * `URL.String()` (Go's per-component escaping).
 */
import { GoError } from '../errors.js';
import { defineFunc, type FuncMap } from '../func.js';
import { T_MAP_ANY, T_STRING, kindOf, mapGet, mapHas, newMap, utf8Bytes } from '../values.js';

type Mode = 'path' | 'host' | 'zone' | 'userPassword' | 'queryComponent' | 'fragment';

function shouldEscape(c: number, mode: Mode): boolean {
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39)) return false;
  const ch = String.fromCharCode(c);
  if ((mode === 'host' || mode === 'zone') && '!$&\'()*+,;=:[]<>"'.includes(ch)) return false;
  if ('-_.~'.includes(ch)) return false;
  if ('$&+,/:;=?@'.includes(ch)) {
    switch (mode) {
      case 'path':
        return ch === '?';
      case 'userPassword':
        return ch === '@' || ch === '/' || ch === '?' || ch === ':';
      case 'queryComponent':
        return true;
      case 'fragment':
        return false;
    }
  }
  if (mode === 'fragment' && '!()*'.includes(ch)) return false;
  return true;
}

const HEX = '0123456789ABCDEF';

function escape(s: string, mode: Mode): string {
  let out = '';
  for (const b of utf8Bytes(s)) {
    if (shouldEscape(b, mode)) {
      out += b === 0x20 && mode === 'queryComponent' ? '+' : '%' + HEX[b >> 4] + HEX[b & 15];
    } else {
      out += String.fromCharCode(b);
    }
  }
  return out;
}

const ishex = (c: string | undefined): boolean => c !== undefined && /^[0-9a-fA-F]$/.test(c);

function unescape(s: string, mode: Mode): string {
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '%') {
      if (i + 2 >= s.length || !ishex(s[i + 1]) || !ishex(s[i + 2])) {
        const rest = s.slice(i);
        throw new GoError(`invalid URL escape ${JSON.stringify(rest.length > 3 ? rest.slice(0, 3) : rest)}`);
      }
      if (mode === 'host' && parseInt(s.slice(i + 1, i + 3), 16) < 0x80 && s.slice(i, i + 3) !== '%25') {
        throw new GoError(`invalid URL escape ${JSON.stringify(s.slice(i, i + 3))}`);
      }
      i += 2;
    } else if ((mode === 'host' || mode === 'zone') && s.charCodeAt(i) < 0x80 && shouldEscape(s.charCodeAt(i), mode)) {
      throw new GoError(`invalid character ${JSON.stringify(s[i])} in host name`);
    }
  }
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '%') {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (s[i] === '+' && mode === 'queryComponent') {
      bytes.push(0x20);
    } else {
      bytes.push(...utf8Bytes(s[i]!));
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

interface Userinfo {
  readonly username: string;
  readonly password: string | undefined;
}

interface ParsedUrl {
  scheme: string;
  opaque: string;
  user: Userinfo | undefined;
  host: string;
  path: string;
  rawQuery: string;
  fragment: string;
  forceQuery: boolean;
  omitHost: boolean;
}

function userinfoString(u: Userinfo): string {
  let s = escape(u.username, 'userPassword');
  if (u.password !== undefined) s += ':' + escape(u.password, 'userPassword');
  return s;
}

function getScheme(raw: string): { scheme: string; rest: string } {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (/[a-zA-Z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return { scheme: '', rest: raw };
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new GoError('missing protocol scheme');
      return { scheme: raw.slice(0, i), rest: raw.slice(i + 1) };
    }
    return { scheme: '', rest: raw };
  }
  return { scheme: '', rest: raw };
}

function validOptionalPort(port: string): boolean {
  if (port === '') return true;
  if (port[0] !== ':') return false;
  return /^[0-9]*$/.test(port.slice(1));
}

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const i = host.lastIndexOf(']');
    if (i < 0) throw new GoError("missing ']' in host");
    const colonPort = host.slice(i + 1);
    if (!validOptionalPort(colonPort)) throw new GoError(`invalid port ${JSON.stringify(colonPort)} after host`);
    const zone = host.slice(0, i).indexOf('%25');
    if (zone >= 0) {
      return unescape(host.slice(0, zone), 'host') + unescape(host.slice(zone, i), 'zone') + unescape(host.slice(i), 'host');
    }
  } else {
    const i = host.lastIndexOf(':');
    if (i !== -1) {
      const colonPort = host.slice(i);
      if (!validOptionalPort(colonPort)) throw new GoError(`invalid port ${JSON.stringify(colonPort)} after host`);
    }
  }
  return unescape(host, 'host');
}

function parseAuthority(authority: string): { user: Userinfo | undefined; host: string } {
  const i = authority.lastIndexOf('@');
  const host = parseHost(i < 0 ? authority : authority.slice(i + 1));
  if (i < 0) return { user: undefined, host };
  const userinfo = authority.slice(0, i);
  if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) throw new GoError('net/url: invalid userinfo');
  const colon = userinfo.indexOf(':');
  if (colon < 0) return { user: { username: unescape(userinfo, 'userPassword'), password: undefined }, host };
  return {
    user: {
      username: unescape(userinfo.slice(0, colon), 'userPassword'),
      password: unescape(userinfo.slice(colon + 1), 'userPassword'),
    },
    host,
  };
}

/** Go's url.Parse. Throws GoError with Go's wrapped message. */
export function parseUrl(raw: string): ParsedUrl {
  const hash = raw.indexOf('#');
  const u = hash < 0 ? raw : raw.slice(0, hash);
  const frag = hash < 0 ? '' : raw.slice(hash + 1);
  let url: ParsedUrl;
  try {
    url = parseWithoutFragment(u);
  } catch (err) {
    throw new GoError(`parse ${JSON.stringify(u)}: ${(err as Error).message}`);
  }
  if (frag !== '') {
    try {
      url.fragment = unescape(frag, 'fragment');
    } catch (err) {
      throw new GoError(`parse ${JSON.stringify(raw)}: ${(err as Error).message}`);
    }
  }
  return url;
}

function parseWithoutFragment(raw: string): ParsedUrl {
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new GoError('net/url: invalid control character in URL');
  const url: ParsedUrl = {
    scheme: '',
    opaque: '',
    user: undefined,
    host: '',
    path: '',
    rawQuery: '',
    fragment: '',
    forceQuery: false,
    omitHost: false,
  };
  if (raw === '*') {
    url.path = '*';
    return url;
  }
  const { scheme, rest: afterScheme } = getScheme(raw);
  url.scheme = scheme.toLowerCase();
  let rest = afterScheme;
  if (rest.endsWith('?') && rest.split('?').length === 2) {
    url.forceQuery = true;
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) {
      url.rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  if (!rest.startsWith('/')) {
    if (url.scheme !== '') {
      url.opaque = rest;
      return url;
    }
    const segment = rest.split('/')[0]!;
    if (segment.includes(':')) throw new GoError('first path segment in URL cannot contain colon');
  }
  if ((url.scheme !== '' || !rest.startsWith('///')) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) {
      rest = authority.slice(slash);
      authority = authority.slice(0, slash);
    }
    const parsed = parseAuthority(authority);
    url.user = parsed.user;
    url.host = parsed.host;
  } else if (url.scheme !== '' && rest.startsWith('/')) {
    url.omitHost = true;
  }
  url.path = unescape(rest, 'path');
  return url;
}

function hostname(host: string): string {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end < 0 ? host.slice(1) : host.slice(1, end);
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && validOptionalPort(host.slice(colon))) return host.slice(0, colon);
  return host;
}

/** Go's URL.String() for the fields urlJoin sets. */
function urlString(u: ParsedUrl): string {
  let out = '';
  if (u.scheme !== '') out += u.scheme + ':';
  if (u.opaque !== '') {
    out += u.opaque;
  } else {
    if (u.scheme !== '' || u.host !== '' || u.user !== undefined) {
      if (!(u.omitHost && u.host === '' && u.user === undefined)) {
        if (u.host !== '' || u.path !== '' || u.user !== undefined) out += '//';
        if (u.user !== undefined) out += userinfoString(u.user) + '@';
        if (u.host !== '') out += escape(u.host, 'host');
      }
    }
    const path = u.path === '*' ? '*' : escape(u.path, 'path');
    if (path !== '' && path[0] !== '/' && u.host !== '') out += '/';
    if (out === '' && path.split('/')[0]!.includes(':')) out += './';
    out += path;
  }
  if (u.forceQuery || u.rawQuery !== '') out += '?' + u.rawQuery;
  if (u.fragment !== '') out += '#' + escape(u.fragment, 'fragment');
  return out;
}

function urlParse(v: string): Record<string, unknown> {
  let u: ParsedUrl;
  try {
    u = parseUrl(v);
  } catch (err) {
    throw new GoError(`unable to parse url: ${(err as Error).message}`);
  }
  const dict = newMap();
  dict['scheme'] = u.scheme;
  dict['host'] = u.host;
  dict['hostname'] = hostname(u.host);
  dict['path'] = u.path;
  dict['query'] = u.rawQuery;
  dict['opaque'] = u.opaque;
  dict['fragment'] = u.fragment;
  dict['userinfo'] = u.user === undefined ? '' : userinfoString(u.user);
  return dict;
}

function dictGetOrEmpty(d: Record<string, unknown> | null, key: string): string {
  if (d === null || !mapHas(d, key)) return '';
  const value = mapGet(d, key);
  if (value === null || value === undefined) throw new GoError('runtime error: invalid memory address or nil pointer dereference');
  if (typeof value !== 'string') {
    throw new GoError(`unable to parse ${key} key, must be of type string, but ${kindOf(value)} found`);
  }
  return value;
}

function urlJoin(d: Record<string, unknown> | null): string {
  const u: ParsedUrl = {
    scheme: dictGetOrEmpty(d, 'scheme'),
    host: dictGetOrEmpty(d, 'host'),
    path: dictGetOrEmpty(d, 'path'),
    rawQuery: dictGetOrEmpty(d, 'query'),
    opaque: dictGetOrEmpty(d, 'opaque'),
    fragment: dictGetOrEmpty(d, 'fragment'),
    user: undefined,
    forceQuery: false,
    omitHost: false,
  };
  const userinfo = dictGetOrEmpty(d, 'userinfo');
  if (userinfo !== '') {
    try {
      u.user = parseUrl(`proto://${userinfo}@host`).user;
    } catch (err) {
      throw new GoError(`unable to parse userinfo in dict: ${(err as Error).message}`);
    }
  }
  return urlString(u);
}

/** sprig's URL functions. */
export const sprigUrlFuncs: FuncMap = {
  urlParse: defineFunc([T_STRING], urlParse),
  urlJoin: defineFunc([T_MAP_ANY], urlJoin),
};
