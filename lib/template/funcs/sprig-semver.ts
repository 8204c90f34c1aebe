/**
 * sprig v3.3.0 `semver` and `semverCompare` over a port of Masterminds/semver v3: loose version
 * parsing (`v1`, `1.2` are coerced), constraint strings with `||`, `,`/space ANDs, hyphen
 * ranges, wildcards and the `= != > < >= <= ~ ~> ^` operators, and its pre-release rule (a
 * pre-release version only satisfies constraints that mention a pre-release).
 */
import { GoError } from '../errors.js';
import { defineFunc, type FuncMap } from '../func.js';
import { parseGoUint } from '../../go/strconv.js';
import { GoObject, T_INT, T_STRING, T_UINT64, goInt, type GoMethod, type GoType } from '../values.js';
import { jsonQuote } from './json.js';

const T_VERSION_PTR: GoType = { name: '*semver.Version', kind: 'ptr' };
const T_VERSION: GoType = { name: 'semver.Version', kind: 'struct' };

const ALLOWED = /^[0-9A-Za-z-]+$/;
const NUMERIC = /^[0-9]+$/;

/** A parsed version (Go's `*semver.Version`). */
export class SemverVersion extends GoObject {
  constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    readonly pre: string,
    readonly metadata: string,
    readonly original: string,
    readonly goType: GoType = T_VERSION_PTR,
  ) {
    super();
  }

  override toGoString(): string {
    let s = `${this.major}.${this.minor}.${this.patch}`;
    if (this.pre !== '') s += '-' + this.pre;
    if (this.metadata !== '') s += '+' + this.metadata;
    return s;
  }

  toGoJson(): string {
    return jsonQuote(this.toGoString(), true);
  }

  override fields(): readonly (readonly [string, unknown])[] {
    return [
      ['major', goInt(T_UINT64, this.major)],
      ['minor', goInt(T_UINT64, this.minor)],
      ['patch', goInt(T_UINT64, this.patch)],
      ['pre', this.pre],
      ['metadata', this.metadata],
      ['original', this.original],
    ];
  }

  compare(o: SemverVersion): number {
    for (const [a, b] of [
      [this.major, o.major],
      [this.minor, o.minor],
      [this.patch, o.patch],
    ] as const) {
      if (a !== b) return a < b ? -1 : 1;
    }
    if (this.pre === '' && o.pre === '') return 0;
    if (this.pre === '') return 1;
    if (o.pre === '') return -1;
    return comparePrerelease(this.pre, o.pre);
  }

  override method(name: string): GoMethod | undefined {
    const other = (fn: (o: SemverVersion) => unknown): GoMethod => ({ params: [T_VERSION_PTR], call: (o) => fn(o as SemverVersion) });
    const getter = (fn: () => unknown): GoMethod => ({ params: [], call: fn });
    switch (name) {
      case 'Major':
        return getter(() => goInt(T_UINT64, this.major));
      case 'Minor':
        return getter(() => goInt(T_UINT64, this.minor));
      case 'Patch':
        return getter(() => goInt(T_UINT64, this.patch));
      case 'Prerelease':
        return getter(() => this.pre);
      case 'Metadata':
        return getter(() => this.metadata);
      case 'Original':
        return getter(() => this.original);
      case 'String':
        return getter(() => this.toGoString());
      case 'Compare':
        return other((o) => goInt(T_INT, this.compare(o)));
      case 'LessThan':
        return other((o) => this.compare(o) < 0);
      case 'LessThanEqual':
        return other((o) => this.compare(o) <= 0);
      case 'GreaterThan':
        return other((o) => this.compare(o) > 0);
      case 'GreaterThanEqual':
        return other((o) => this.compare(o) >= 0);
      case 'Equal':
        return other((o) => this.compare(o) === 0);
      case 'IncPatch':
        return getter(() =>
          this.pre !== '' ? this.next(this.major, this.minor, this.patch) : this.next(this.major, this.minor, this.patch + 1n),
        );
      case 'IncMinor':
        return getter(() => this.next(this.major, this.minor + 1n, 0n));
      case 'IncMajor':
        return getter(() => this.next(this.major + 1n, 0n, 0n));
    }
    return undefined;
  }

  private next(major: bigint, minor: bigint, patch: bigint): SemverVersion {
    const prefix = this.original.startsWith('v') ? 'v' : '';
    const bare = new SemverVersion(major, minor, patch, '', '', '', T_VERSION);
    return new SemverVersion(major, minor, patch, '', '', prefix + bare.toGoString(), T_VERSION);
  }
}

function comparePrePart(s: string, o: string): number {
  if (s === o) return 0;
  if (s === '') return o !== '' ? -1 : 1;
  if (o === '') return s !== '' ? 1 : -1;
  const oi = parseGoUint(o, 10);
  const si = parseGoUint(s, 10);
  const oNum = !('error' in oi);
  const sNum = !('error' in si);
  if (!oNum && !sNum) return s > o ? 1 : -1;
  if (!oNum) return -1;
  if (!sNum) return 1;
  return si.value > oi.value ? 1 : -1;
}

function comparePrerelease(v: string, o: string): number {
  const sparts = v.split('.');
  const oparts = o.split('.');
  const l = Math.max(sparts.length, oparts.length);
  for (let i = 0; i < l; i++) {
    const d = comparePrePart(sparts[i] ?? '', oparts[i] ?? '');
    if (d !== 0) return d;
  }
  return 0;
}

function validIdentifiers(s: string): boolean {
  return s.split('.').every((part) => part !== '' && ALLOWED.test(part));
}

function validatePrerelease(p: string): void {
  for (const part of p.split('.')) {
    if (NUMERIC.test(part)) {
      if (part.length > 1 && part[0] === '0') throw new GoError('version segment starts with 0');
    } else if (!ALLOWED.test(part)) {
      throw new GoError('invalid prerelease string');
    }
  }
}

/** Masterminds/semver NewVersion (coercing mode, the package default). */
export function newVersion(v: string): SemverVersion {
  let s = v.startsWith('v') ? v.slice(1) : v;
  let metadata = '';
  let pre = '';
  const plus = s.indexOf('+');
  if (plus >= 0) {
    metadata = s.slice(plus + 1);
    s = s.slice(0, plus);
    if (!validIdentifiers(metadata)) throw new GoError('invalid semantic version');
  }
  const dash = s.indexOf('-');
  if (dash >= 0) {
    pre = s.slice(dash + 1);
    s = s.slice(0, dash);
    if (!validIdentifiers(pre)) throw new GoError('invalid semantic version');
  }
  const segs = s.split('.');
  if (segs.length > 3 || segs.some((seg) => !NUMERIC.test(seg))) throw new GoError('invalid semantic version');
  const nums = segs.map((seg) => {
    const parsed = parseGoUint(seg, 10);
    if ('error' in parsed) throw new GoError(`error parsing version segment: strconv.ParseUint: parsing "${seg}": value out of range`);
    return parsed.value;
  });
  if (pre !== '') validatePrerelease(pre);
  return new SemverVersion(nums[0]!, nums[1] ?? 0n, nums[2] ?? 0n, pre, metadata, v);
}

// ---------------------------------------------------------------------------------------------
// Constraints

const SPACE = '[\\t\\n\\f\\r ]';
const CV = String.raw`v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?`;
const OPS = String.raw`=||!=|>|<|>=|=>|<=|=<|~|~>|\^`;
const CONSTRAINT = new RegExp(`^${SPACE}*(${OPS})${SPACE}*(${CV})${SPACE}*$`);
const RANGE = new RegExp(`${SPACE}*(${CV})${SPACE}+-${SPACE}+(${CV})${SPACE}*`, 'g');
const FIND = new RegExp(`(${OPS})${SPACE}*(${CV})`, 'g');
const VALID = new RegExp(`^(${SPACE}*(${OPS})${SPACE}*(${CV})${SPACE}*)((?:${SPACE}+|,${SPACE}*)(${OPS})${SPACE}*(${CV})${SPACE}*)*$`);

interface Constraint {
  readonly con: SemverVersion;
  readonly orig: string;
  readonly op: string;
  readonly minorDirty: boolean;
  readonly patchDirty: boolean;
  readonly dirty: boolean;
}

const isX = (x: string): boolean => x === 'x' || x === '*' || x === 'X';

function parseConstraint(c: string): Constraint {
  const m = CONSTRAINT.exec(c);
  if (m === null) throw new GoError(`improper constraint: ${c}`);
  const major = m[3] ?? '';
  const minor = m[4] ?? '';
  const patch = m[5] ?? '';
  const pre = m[6] ?? '';
  let ver = m[2]!;
  let minorDirty = false;
  let patchDirty = false;
  let dirty = false;
  if (isX(major) || major === '') {
    ver = `0.0.0${pre}`;
    dirty = true;
  } else if (isX(minor.replace(/^\./, '')) || minor === '') {
    minorDirty = dirty = true;
    ver = `${major}.0.0${pre}`;
  } else if (isX(patch.replace(/^\./, '')) || patch === '') {
    patchDirty = dirty = true;
    ver = `${major}${minor}.0${pre}`;
  }
  let con: SemverVersion;
  try {
    con = newVersion(ver);
  } catch {
    throw new GoError('constraint Parser Error');
  }
  return { con, orig: m[2]!, op: m[1]!, minorDirty, patchDirty, dirty };
}

const prereleaseBlocked = (v: SemverVersion, c: Constraint): boolean => v.pre !== '' && c.con.pre === '';

function tilde(v: SemverVersion, c: Constraint): boolean {
  if (prereleaseBlocked(v, c)) return false;
  if (v.compare(c.con) < 0) return false;
  if (c.con.major === 0n && c.con.minor === 0n && c.con.patch === 0n && !c.minorDirty && !c.patchDirty) return true;
  if (v.major !== c.con.major) return false;
  if (v.minor !== c.con.minor && !c.minorDirty) return false;
  return true;
}

function check(v: SemverVersion, c: Constraint): boolean {
  switch (c.op) {
    case '':
    case '=':
      if (prereleaseBlocked(v, c)) return false;
      return c.dirty ? tilde(v, c) : v.compare(c.con) === 0;
    case '!=':
      if (c.dirty) {
        if (prereleaseBlocked(v, c)) return false;
        if (c.con.major !== v.major) return true;
        if (c.con.minor !== v.minor && !c.minorDirty) return true;
        if (c.minorDirty) return false;
        if (c.con.patch !== v.patch && !c.patchDirty) return true;
        if (c.patchDirty) {
          if (v.pre !== '' || c.con.pre !== '') return comparePrerelease(v.pre, c.con.pre) !== 0;
          return false;
        }
      }
      return v.compare(c.con) !== 0;
    case '>':
      if (prereleaseBlocked(v, c)) return false;
      if (!c.dirty) return v.compare(c.con) === 1;
      if (v.major > c.con.major) return true;
      if (v.major < c.con.major) return false;
      if (c.minorDirty) return false;
      if (c.patchDirty) return v.minor > c.con.minor;
      return v.compare(c.con) === 1;
    case '<':
      if (prereleaseBlocked(v, c)) return false;
      return v.compare(c.con) < 0;
    case '>=':
    case '=>':
      if (prereleaseBlocked(v, c)) return false;
      return v.compare(c.con) >= 0;
    case '<=':
    case '=<':
      if (prereleaseBlocked(v, c)) return false;
      if (!c.dirty) return v.compare(c.con) <= 0;
      if (v.major > c.con.major) return false;
      if (v.major === c.con.major && v.minor > c.con.minor && !c.minorDirty) return false;
      return true;
    case '~':
    case '~>':
      return tilde(v, c);
    case '^':
      if (prereleaseBlocked(v, c)) return false;
      if (v.compare(c.con) < 0) return false;
      if (c.con.major > 0n || c.minorDirty) return v.major === c.con.major;
      if (c.con.major === 0n && v.major > 0n) return false;
      if (c.con.minor > 0n || c.patchDirty) return v.minor === c.con.minor;
      if (c.con.minor === 0n && v.minor > 0n) return false;
      return c.con.patch === v.patch;
  }
  return false;
}

function rewriteRange(s: string): string {
  let out = s;
  for (const m of s.matchAll(RANGE)) out = out.replace(m[0], `>= ${m[1]}, <= ${m[11]}`);
  return out;
}

/** Masterminds/semver NewConstraint: OR-groups of AND-ed constraints. */
export function parseConstraints(constraint: string): readonly (readonly Constraint[])[] {
  return rewriteRange(constraint)
    .split('||')
    .map((or) => {
      if (!VALID.test(or)) throw new GoError(`improper constraint: ${or}`);
      const found = [...or.matchAll(FIND)].map((m) => m[0]);
      return (found.length > 0 ? found : [or]).map(parseConstraint);
    });
}

/** Constraints.Check: some OR-group whose constraints all hold. */
export function checkConstraints(groups: readonly (readonly Constraint[])[], version: SemverVersion): boolean {
  return groups.some((and) => and.every((c) => check(version, c)));
}

/** sprig's semver functions. */
export const sprigSemverFuncs: FuncMap = {
  semver: defineFunc([T_STRING], newVersion),
  semverCompare: defineFunc([T_STRING, T_STRING], (constraint: string, version: string) => {
    const groups = parseConstraints(constraint);
    return checkConstraints(groups, newVersion(version));
  }),
};
