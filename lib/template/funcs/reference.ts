/**
 * The reference agent's own template functions, which take precedence over same-named sprig
 * entries: Go `strings` helpers under their Go names, `Hash`/`Sha2Hash` (hex SHA3-256/SHA-256
 * of the two arguments concatenated) and `regexReplaceAll`/`regexReplaceAllLiteral` (an invalid
 * pattern panics, which fails the render).
 */
import { createHash } from 'node:crypto';
import { defineFunc, type FuncMap } from '../func.js';
import { type GoInt, T_INT, T_STRING, utf8Bytes } from '../values.js';
import { budgetedReplace } from './budgeted.js';
import { goToLower, goToUpper, goTrim, goTrimLeft, goTrimPrefix, goTrimRight, goTrimSpace, goTrimSuffix } from './gostrings.js';
import { mustCompile } from './sprig-regex.js';

const S = T_STRING;

const digest = (algorithm: string, text: string): string => createHash(algorithm).update(utf8Bytes(text)).digest('hex');

/** The reference's custom function map. */
export const referenceCustomFuncs: FuncMap = {
  ToLower: defineFunc([S], goToLower),
  ToUpper: defineFunc([S], goToUpper),
  Replace: defineFunc([S, S, S, T_INT], (s: string, old: string, nw: string, n: GoInt) =>
    // Any count beyond the possible number of replacements behaves like "all".
    budgetedReplace(s, old, nw, n.value < 0n ? -1 : n.value > 0x7fffffffn ? 0x7fffffff : Number(n.value)),
  ),
  Trim: defineFunc([S, S], goTrim),
  TrimLeft: defineFunc([S, S], goTrimLeft),
  TrimRight: defineFunc([S, S], goTrimRight),
  TrimPrefix: defineFunc([S, S], goTrimPrefix),
  TrimSuffix: defineFunc([S, S], goTrimSuffix),
  TrimSpace: defineFunc([S], goTrimSpace),
  Hash: defineFunc([S, S], (salt: string, input: string) => digest('sha3-256', salt + input)),
  Sha2Hash: defineFunc([S, S], (salt: string, input: string) => digest('sha256', salt + input)),
  regexReplaceAll: defineFunc([S, S, S], (regex: string, s: string, repl: string) => mustCompile(regex).replaceAll(s, repl)),
  regexReplaceAllLiteral: defineFunc([S, S, S], (regex: string, s: string, repl: string) => mustCompile(regex).replaceAllLiteral(s, repl)),
};
