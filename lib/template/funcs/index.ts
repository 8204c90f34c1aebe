/**
 * The reference agent's template function map: Go's built-ins, then the whole sprig v3.3.0
 * text function map (whose `slice` replaces the built-in), then the reference's own functions.
 */
import { builtinFuncs } from '../builtins.js';
import type { FuncMap } from '../func.js';
import { withoutHostAccess } from './host-access.js';
import { referenceCustomFuncs } from './reference.js';
import { sprigCryptoFuncs } from './sprig-crypto.js';
import { sprigDateFuncs } from './sprig-dates.js';
import { sprigDefaultFuncs } from './sprig-defaults.js';
import { sprigDictFuncs } from './sprig-dicts.js';
import { sprigEncodingFuncs } from './sprig-encoding.js';
import { sprigListFuncs } from './sprig-lists.js';
import { sprigMathFuncs } from './sprig-math.js';
import { sprigOsFuncs } from './sprig-os.js';
import { sprigRegexFuncs } from './sprig-regex.js';
import { sprigSemverFuncs } from './sprig-semver.js';
import { sprigStringFuncs } from './sprig-strings.js';
import { sprigUrlFuncs } from './sprig-url.js';

/** sprig v3.3.0's TxtFuncMap. */
export const sprigFuncs: FuncMap = Object.freeze({
  ...sprigStringFuncs,
  ...sprigMathFuncs,
  ...sprigListFuncs,
  ...sprigDictFuncs,
  ...sprigDefaultFuncs,
  ...sprigOsFuncs,
  ...sprigEncodingFuncs,
  ...sprigCryptoFuncs,
  ...sprigSemverFuncs,
  ...sprigRegexFuncs,
  ...sprigUrlFuncs,
  ...sprigDateFuncs,
});

/** Built-ins + sprig + the reference's custom functions, as `stage.template` sees them. */
export const referenceFuncs: FuncMap = Object.freeze({
  ...builtinFuncs,
  ...sprigFuncs,
  ...referenceCustomFuncs,
});

/** `referenceFuncs` for a sandboxed run: no environment variables, no name resolution. */
export const hostlessReferenceFuncs: FuncMap = withoutHostAccess(referenceFuncs);
