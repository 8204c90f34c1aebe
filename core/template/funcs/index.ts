/**
 * The reference agent's template function map: Go's built-ins, then the whole sprig v3.3.0
 * text function map (whose `slice` replaces the built-in), then the reference's own functions.
 */
import { builtinFuncs } from '../builtins';
import type { FuncMap } from '../func';
import { referenceCustomFuncs } from './reference';
import { sprigCryptoFuncs } from './sprig-crypto';
import { sprigDateFuncs } from './sprig-dates';
import { sprigDefaultFuncs } from './sprig-defaults';
import { sprigDictFuncs } from './sprig-dicts';
import { sprigEncodingFuncs } from './sprig-encoding';
import { sprigListFuncs } from './sprig-lists';
import { sprigMathFuncs } from './sprig-math';
import { sprigOsFuncs } from './sprig-os';
import { sprigRegexFuncs } from './sprig-regex';
import { sprigSemverFuncs } from './sprig-semver';
import { sprigStringFuncs } from './sprig-strings';
import { sprigUrlFuncs } from './sprig-url';

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
