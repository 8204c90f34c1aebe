/**
 * sprig v3.3.0 environment, path and network functions: `env`, `expandenv` (Go's os.Expand
 * rules), Go's `path`/`path/filepath` (Unix) functions and `getHostByName`.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { GoError } from '../errors.js';
import { defineFunc, type FuncMap } from '../func.js';
import { T_STRING } from '../values.js';
import { HostCache } from './host-cache.js';

const S = T_STRING;

function getenv(name: string): string {
  return process.env[name] ?? '';
}

function isShellSpecialVar(c: string): boolean {
  return '*#$@!?-0123456789'.includes(c);
}

function isAlphaNum(c: string): boolean {
  return /^[A-Za-z0-9_]$/.test(c);
}

/** Go's os.getShellName: the variable name after a `$` and how many bytes it spans. */
function shellName(s: string): { name: string; width: number } {
  if (s[0] === '{') {
    if (s.length > 2 && isShellSpecialVar(s[1]!) && s[2] === '}') return { name: s[1]!, width: 3 };
    for (let i = 1; i < s.length; i++) {
      if (s[i] === '}') {
        if (i === 1) return { name: '', width: 2 };
        return { name: s.slice(1, i), width: i + 1 };
      }
    }
    return { name: '', width: 1 };
  }
  if (isShellSpecialVar(s[0]!)) return { name: s[0]!, width: 1 };
  let i = 0;
  while (i < s.length && isAlphaNum(s[i]!)) i++;
  return { name: s.slice(0, i), width: i };
}

/** Go's os.Expand with a mapping function. */
export function goExpand(s: string, mapping: (name: string) => string): string {
  let out: string | undefined;
  let i = 0;
  for (let j = 0; j < s.length; j++) {
    if (s[j] === '$' && j + 1 < s.length) {
      out = (out ?? '') + s.slice(i, j);
      const { name, width } = shellName(s.slice(j + 1));
      if (name === '' && width > 0) {
        // Invalid syntax: the characters are dropped.
      } else if (name === '') {
        out += s[j];
      } else {
        out += mapping(name);
      }
      j += width;
      i = j + 1;
    }
  }
  return out === undefined ? s : out + s.slice(i);
}

/** Go's path.Clean. */
export function cleanPath(path: string): string {
  if (path === '') return '.';
  const rooted = path[0] === '/';
  const n = path.length;
  let out = rooted ? '/' : '';
  let r = rooted ? 1 : 0;
  let dotdot = rooted ? 1 : 0;
  while (r < n) {
    if (path[r] === '/') {
      r++;
    } else if (path[r] === '.' && (r + 1 === n || path[r + 1] === '/')) {
      r++;
    } else if (path[r] === '.' && path[r + 1] === '.' && (r + 2 === n || path[r + 2] === '/')) {
      r += 2;
      if (out.length > dotdot) {
        let w = out.length - 1;
        while (w > dotdot && out[w] !== '/') w--;
        out = out.slice(0, w);
      } else if (!rooted) {
        if (out.length > 0) out += '/';
        out += '..';
        dotdot = out.length;
      }
    } else {
      if ((rooted && out.length !== 1) || (!rooted && out.length !== 0)) out += '/';
      for (; r < n && path[r] !== '/'; r++) out += path[r];
    }
  }
  return out === '' ? '.' : out;
}

/** Go's path.Base. */
export function basePath(path: string): string {
  if (path === '') return '.';
  while (path.length > 0 && path[path.length - 1] === '/') path = path.slice(0, -1);
  const i = path.lastIndexOf('/');
  if (i >= 0) path = path.slice(i + 1);
  return path === '' ? '/' : path;
}

/** Go's path.Dir. */
export function dirPath(path: string): string {
  return cleanPath(path.slice(0, path.lastIndexOf('/') + 1));
}

/** Go's path.Ext. */
export function extPath(path: string): string {
  for (let i = path.length - 1; i >= 0 && path[i] !== '/'; i--) {
    if (path[i] === '.') return path.slice(i);
  }
  return '';
}

const isAbsPath = (path: string): boolean => path.startsWith('/');

// ---------------------------------------------------------------------------------------------
// getHostByName

/** The system resolver (getaddrinfo, like Go's cgo resolver): every address of the name. */
async function lookupAddresses(name: string): Promise<readonly string[]> {
  const found = await lookup(name, { all: true });
  return found.map((a) => a.address);
}

/** The names getHostByName has resolved: 60 s for an answer, 5 s for a failure, 1,000 names. */
export const hostLookups = new HostCache({ resolve: lookupAddresses });

/**
 * sprig's getHostByName over `cache`: one of the name's addresses, picked at random, or an IP
 * literal as it is. Go blocks the render on the lookup; here the render never waits (see
 * HostCache), so:
 * - a name not resolved yet renders as the empty string (`| default` can stand in for it) and
 *   starts a lookup in the background; the renders after it settles use its answer;
 * - an answer is used for 60 s, then the last known addresses keep being used while a fresh
 *   lookup runs;
 * - a name that did not resolve fails the render as sprig does (`rand.Intn(0)` panics), for 5 s,
 *   then it is looked up again.
 */
export function hostByName(cache: HostCache, name: string): string {
  if (isIP(name) !== 0) return name;
  const addresses = cache.addresses(name);
  if (addresses === undefined) return '';
  if (addresses.length === 0) throw new GoError('invalid argument to Intn');
  return addresses[Math.floor(Math.random() * addresses.length)]!;
}

const getHostByName = (name: string): string => hostByName(hostLookups, name);

/** sprig's OS, path and network functions. */
export const sprigOsFuncs: FuncMap = {
  env: defineFunc([S], getenv),
  expandenv: defineFunc([S], (s: string) => goExpand(s, getenv)),
  getHostByName: defineFunc([S], getHostByName),
  base: defineFunc([S], basePath),
  dir: defineFunc([S], dirPath),
  clean: defineFunc([S], cleanPath),
  ext: defineFunc([S], extPath),
  isAbs: defineFunc([S], isAbsPath),
  osBase: defineFunc([S], basePath),
  osClean: defineFunc([S], cleanPath),
  osDir: defineFunc([S], dirPath),
  osExt: defineFunc([S], extPath),
  osIsAbs: defineFunc([S], isAbsPath),
};
