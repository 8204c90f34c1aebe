/**
 * A function map with sprig's host functions cut off, for templates nobody vetted (a playground
 * config from a link): `env` and `expandenv` see no variable set, and `getHostByName` fails
 * instead of asking the resolver, whose queries would carry whatever the template put in the name
 * to any DNS server on the way.
 */
import { GoError } from '../errors.js';
import { defineFunc, type FuncMap } from '../func.js';
import { T_STRING } from '../values.js';
import { goExpand } from './sprig-os.js';

const HOSTLESS: FuncMap = {
  env: defineFunc([T_STRING], () => ''),
  expandenv: defineFunc([T_STRING], (s: string) => goExpand(s, () => '')),
  getHostByName: defineFunc([T_STRING], () => {
    throw new GoError('getHostByName: this template may not resolve host names');
  }),
};

/** `funcs` with `env`, `expandenv` and `getHostByName` (where present) replaced by their host-free forms. */
export function withoutHostAccess(funcs: FuncMap): FuncMap {
  const out: Record<string, FuncMap[string]> = { ...funcs };
  for (const [name, func] of Object.entries(HOSTLESS)) if (Object.hasOwn(funcs, name)) out[name] = func;
  return Object.freeze(out);
}
